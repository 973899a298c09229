// Compiled into every program of a build with the address sanitizer (WEFT_SANITIZE=address...),
// so that ctest, the scripts and a program run by hand all judge the same thing.
//
// LLVM's OpenMP runtime (libomp, what clang's -fopenmp links) keeps the buffers of the threads it
// adds when a team grows past the cores (omp_set_num_threads(5) on 2 cores, as the loop nest tests
// do) until after LeakSanitizer's exit check, which then reports them as direct leaks from
// libomp.so with no frame of ours. They are the runtime's, not weft's: suppressed by module, so a
// leak with any weft frame in it is still an error. GCC's libgomp frees its threads and needs none.

// The sanitizer runtimes call these weak hooks before parsing LSAN_OPTIONS (which still wins).
extern "C" const char* __lsan_default_suppressions() { return "leak:libomp.so\n"; }
// Quiet when a suppression matched: the programs' own stderr is what tests read.
extern "C" const char* __lsan_default_options() { return "print_suppressions=0"; }
