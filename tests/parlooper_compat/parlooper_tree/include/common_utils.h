// Stand-in for PARLOOPER's include/common_utils.h: no include guard, the loop headers by quoted
// names (found next to this file first), and global definitions of the samples' helpers.
#include <omp.h>
#include <stdio.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "jit_compile.h"
#include "par_loop_generator.h"
#include "threaded_loops.h"

double ifreq;

inline double getTime() { return omp_get_wtime() * ifreq; }
