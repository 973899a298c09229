# Peer libraries measured side by side in the benchmarks (optional). Each found peer defines an
# interface target and a macro: weft_peer_libxsmm (WEFT_HAVE_LIBXSMM), weft_peer_openblas
# (WEFT_HAVE_OPENBLAS), weft_peer_dnnl (WEFT_HAVE_DNNL).
find_package(OpenBLAS CONFIG QUIET)
find_library(WEFT_OPENBLAS_LIBRARY NAMES openblas)
# Debian puts cblas.h in a folder of the target's multiarch triplet (x86_64-linux-gnu/openblas-pthread,
# aarch64-linux-gnu/openblas-pthread): the host's header must not be taken when cross-compiling.
find_path(WEFT_CBLAS_INCLUDE NAMES cblas.h PATH_SUFFIXES openblas ${CMAKE_LIBRARY_ARCHITECTURE}/openblas-pthread)
if(WEFT_OPENBLAS_LIBRARY AND WEFT_CBLAS_INCLUDE)
  add_library(weft_peer_openblas INTERFACE)
  target_link_libraries(weft_peer_openblas INTERFACE ${WEFT_OPENBLAS_LIBRARY})
  target_include_directories(weft_peer_openblas INTERFACE ${WEFT_CBLAS_INCLUDE})
  target_compile_definitions(weft_peer_openblas INTERFACE WEFT_HAVE_OPENBLAS=1)
  message(STATUS "weft peers: OpenBLAS ${WEFT_OPENBLAS_LIBRARY}")
endif()

# libxsmm 1.17 from Debian: a static library that needs a BLAS and libdl/libm/pthread. Debian builds
# it for amd64 only, into /usr/lib (not a multiarch folder): on other targets, what is found there
# is the host's.
if(WEFT_ARCH STREQUAL "x64")
  find_library(WEFT_LIBXSMM_LIBRARY NAMES libxsmm.a xsmm)
  find_path(WEFT_LIBXSMM_INCLUDE NAMES libxsmm.h)
endif()
if(WEFT_LIBXSMM_LIBRARY AND WEFT_LIBXSMM_INCLUDE AND TARGET weft_peer_openblas)
  add_library(weft_peer_libxsmm INTERFACE)
  target_link_libraries(weft_peer_libxsmm INTERFACE ${WEFT_LIBXSMM_LIBRARY} weft_peer_openblas
    Threads::Threads ${CMAKE_DL_LIBS} m)
  target_include_directories(weft_peer_libxsmm INTERFACE ${WEFT_LIBXSMM_INCLUDE})
  target_compile_definitions(weft_peer_libxsmm INTERFACE WEFT_HAVE_LIBXSMM=1)
  message(STATUS "weft peers: libxsmm ${WEFT_LIBXSMM_LIBRARY}")
endif()

# oneDNN by library and header, not by its CMake package: Debian's dnnl-config.cmake does a
# find_package(OpenCL REQUIRED) (its GPU runtime is OpenCL), which fails the whole configure when the
# OpenCL development files are absent, as on a fresh machine after install-deps. The CPU benchmarks
# only need libdnnl and its headers.
find_library(WEFT_DNNL_LIBRARY NAMES dnnl)
find_path(WEFT_DNNL_INCLUDE NAMES oneapi/dnnl/dnnl.hpp)
if(WEFT_DNNL_LIBRARY AND WEFT_DNNL_INCLUDE)
  add_library(weft_peer_dnnl INTERFACE)
  target_link_libraries(weft_peer_dnnl INTERFACE ${WEFT_DNNL_LIBRARY})
  target_include_directories(weft_peer_dnnl INTERFACE ${WEFT_DNNL_INCLUDE})
  target_compile_definitions(weft_peer_dnnl INTERFACE WEFT_HAVE_DNNL=1)
  message(STATUS "weft peers: oneDNN ${WEFT_DNNL_LIBRARY}")
endif()

# All peers that were found, for a benchmark that compares with any of them.
add_library(weft_peers INTERFACE)
# libxsmm first: the static libxsmm.a needs the BLAS after it on the link line (with --as-needed a
# BLAS named before it is dropped before libxsmm asks for sgemm_).
foreach(peer weft_peer_libxsmm weft_peer_openblas weft_peer_dnnl)
  if(TARGET ${peer})
    target_link_libraries(weft_peers INTERFACE ${peer})
  endif()
endforeach()
