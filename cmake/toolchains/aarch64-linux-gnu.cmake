# Cross-compiling weft for AArch64 Linux on a Debian 12 amd64 host, tests run under qemu-user.
#
#   cmake -S . -B build-aarch64 -G Ninja \
#     -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/aarch64-linux-gnu.cmake
#   cmake --build build-aarch64 -j1 && ctest --test-dir build-aarch64
#
# Needs, on Debian 12 (the header-only libcli11-dev and nlohmann-json3-dev are Architecture: all,
# Multi-Arch: foreign, so the installed ones serve both architectures; the others are Multi-Arch:
# same and install beside their amd64 twins, at the same version):
#   apt-get install g++-aarch64-linux-gnu qemu-user
#   dpkg --add-architecture arm64 && apt-get update
#   apt-get install --no-install-recommends libgtest-dev:arm64 libgmock-dev:arm64 \
#     libbenchmark-dev:arm64 libspdlog-dev:arm64 libfmt-dev:arm64 libgomp1:arm64 pkgconf:arm64 \
#     libcli11-dev nlohmann-json3-dev
# (libopenblas-dev:arm64 too for the OpenBLAS peer of the benchmarks.)
#
# There is no separate sysroot: Debian's multiarch layout puts the arm64 packages beside the amd64
# ones (libraries and CMake packages in /usr/lib/aarch64-linux-gnu, headers in the shared
# /usr/include, header-only packages in /usr/share), and Debian's cross gcc already searches
# /usr/include and /usr/lib/aarch64-linux-gnu. The find root is therefore "/", and what keeps the
# amd64 packages out is the library architecture: find_package and find_library look in
# /usr/lib/aarch64-linux-gnu, never in /usr/lib/x86_64-linux-gnu. Plain /usr/lib is searched too,
# though: an amd64 package that installs there (Debian's libxsmm-dev: /usr/lib/libxsmm.a) is found
# as if it were the target's, so such finds must be made for x86-64 targets only.

set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

set(WEFT_CROSS_TRIPLET aarch64-linux-gnu)
set(CMAKE_C_COMPILER ${WEFT_CROSS_TRIPLET}-gcc)
set(CMAKE_CXX_COMPILER ${WEFT_CROSS_TRIPLET}-g++)
set(CMAKE_LIBRARY_ARCHITECTURE ${WEFT_CROSS_TRIPLET})

# The cross toolchain's own target files (/usr/aarch64-linux-gnu: libc, libstdc++, libgomp of the
# *-arm64-cross packages, what the cross linker links against) and the multiarch root (/) with the
# arm64 packages.
set(CMAKE_FIND_ROOT_PATH /usr/${WEFT_CROSS_TRIPLET} /)
# Programs run on the build host; libraries, headers and packages are the target's.
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# pkg-config for the target: pkgconf:arm64 installs aarch64-linux-gnu-pkg-config, whose personality
# searches /usr/lib/aarch64-linux-gnu/pkgconfig and /usr/share/pkgconfig only. Without it, the plain
# pkg-config is limited to the same directories.
find_program(WEFT_CROSS_PKG_CONFIG ${WEFT_CROSS_TRIPLET}-pkg-config NO_CMAKE_FIND_ROOT_PATH)
if(WEFT_CROSS_PKG_CONFIG)
  set(PKG_CONFIG_EXECUTABLE ${WEFT_CROSS_PKG_CONFIG} CACHE FILEPATH "pkg-config for the target")
else()
  set(ENV{PKG_CONFIG_LIBDIR} /usr/lib/${WEFT_CROSS_TRIPLET}/pkgconfig:/usr/share/pkgconfig)
endif()

# Target programs (tests, gtest_discover_tests' listing at build time, try_run) run under qemu-user.
# They run on the arm64 runtime of the multiarch tree, the one the arm64 packages above depend on:
# qemu finds the loader at /lib/ld-linux-aarch64.so.1 (libc6:arm64), which finds libc, libstdc++,
# libgomp (libgomp1:arm64), libspdlog, libfmt, ... in /lib/aarch64-linux-gnu and
# /usr/lib/aarch64-linux-gnu through the host's /etc/ld.so.cache (it lists the arm64 directories).
# "-L /" turns qemu's path prefix off whatever QEMU_LD_PREFIX says. Not "-L /usr/aarch64-linux-gnu":
# that takes the loader from the cross toolchain's libc6-arm64-cross (glibc 2.36-8) but libc.so.6
# still from /lib/aarch64-linux-gnu (libc6:arm64, 2.36-9+deb12u14, found through ld.so.cache), and
# with a loader and a libc of different builds every program that starts a thread hangs.
find_program(WEFT_QEMU_AARCH64 NAMES qemu-aarch64 qemu-aarch64-static NO_CMAKE_FIND_ROOT_PATH)
if(WEFT_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${WEFT_QEMU_AARCH64} -L /)
endif()
