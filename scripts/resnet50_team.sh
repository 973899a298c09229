# shellcheck shell=bash
# Sourced by conv_resnet50.sh and tune_conv_resnet50.sh: the team of a ResNet-50 layer run.
#
#   resnet50_team <caller>   sets `threads` (THREADS, default 1) and the array `pin` (taskset with
#                            PIN's CPU list; CPU 1 for one thread when PIN is unset; none else), and
#                            exports OMP_NUM_THREADS and close binding to cores; a THREADS that is
#                            not a positive integer exits 2 with a message naming the caller.
# shellcheck disable=SC2034 # threads and pin are for the sourcing script
resnet50_team() {
  threads=${THREADS:-1}
  if [[ ! $threads =~ ^[1-9][0-9]*$ ]]; then
    echo "$1: THREADS must be a positive integer, not '$threads'" >&2
    exit 2
  fi
  pin=()
  if [[ -n ${PIN:-} ]]; then
    pin=(taskset -c "$PIN")
  elif [[ $threads == 1 ]]; then
    pin=(taskset -c 1)
  fi
  export OMP_NUM_THREADS=$threads OMP_PROC_BIND=${OMP_PROC_BIND:-close} OMP_PLACES=${OMP_PLACES:-cores}
}
