// The gradient sums over the ranks, two ways (gradient_exchange.hpp):
//
// OverlappedAllreduce  each layer's gradient is MPI_Iallreduce'd (in place, a sum) the moment it is
//                      ready, while the backward pass goes on with the layers below; complete() is
//                      MPI_Waitall. Open MPI moves a nonblocking collective on only inside MPI calls
//                      (no progress thread by default): progress() calls MPI_Testall between the
//                      passes so that the reductions advance behind the compute instead of all at
//                      the final wait.
// BlockingAllreduce    (--no-overlap) remembers the gradients and sums each with a blocking
//                      MPI_Allreduce in complete(), after the backward pass: nothing hides the
//                      communication, the baseline the overlap is measured against.
//
// Both count the seconds spent inside MPI calls (take_seconds): the exposed communication.
#pragma once

#include <mpi.h>

#include <span>
#include <vector>

#include "gradient_exchange.hpp"

namespace weft::samples {

class OverlappedAllreduce final : public GradientExchange {
 public:
  explicit OverlappedAllreduce(MPI_Comm comm) : comm_(comm) {}
  void ready(int layer, std::span<float> gradient) override;
  void progress() override;
  void complete() override;
  double take_seconds() override;

 private:
  MPI_Comm comm_;
  std::vector<MPI_Request> requests_;
  double seconds_ = 0;
};

class BlockingAllreduce final : public GradientExchange {
 public:
  explicit BlockingAllreduce(MPI_Comm comm) : comm_(comm) {}
  void ready(int layer, std::span<float> gradient) override;
  void progress() override {}
  void complete() override;
  double take_seconds() override;

 private:
  MPI_Comm comm_;
  std::vector<std::span<float>> pending_;
  double seconds_ = 0;
};

}  // namespace weft::samples
