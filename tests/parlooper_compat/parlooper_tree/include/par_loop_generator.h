// Stand-in: PARLOOPER declares its generator here without including <string> itself.
#ifndef _PAR_LOOP_GENERATOR_H_
#define _PAR_LOOP_GENERATOR_H_
std::string loop_generator(const char* _loop_nest_desc_extended);
#endif
