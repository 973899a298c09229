#include "mpi_gradient_exchange.hpp"

#include <climits>

#include <weft/jit/error.hpp>

#include "mpi_session.hpp"

namespace weft::samples {

namespace {

int element_count(std::span<float> gradient) {
  if (gradient.size() > static_cast<std::size_t>(INT_MAX))
    throw Error("a layer's gradient has more than INT_MAX floats, more than one MPI all-reduce takes");
  return static_cast<int>(gradient.size());
}

}  // namespace

void OverlappedAllreduce::ready(int, std::span<float> gradient) {
  const double start = MPI_Wtime();
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Iallreduce(MPI_IN_PLACE, gradient.data(), element_count(gradient), MPI_FLOAT, MPI_SUM, comm_,
                           &request),
            "MPI_Iallreduce");
  requests_.push_back(request);
  seconds_ += MPI_Wtime() - start;
}

void OverlappedAllreduce::progress() {
  if (requests_.empty()) return;
  const double start = MPI_Wtime();
  int done = 0;
  check_mpi(MPI_Testall(static_cast<int>(requests_.size()), requests_.data(), &done, MPI_STATUSES_IGNORE),
            "MPI_Testall");
  seconds_ += MPI_Wtime() - start;
}

void OverlappedAllreduce::complete() {
  const double start = MPI_Wtime();
  check_mpi(MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
  requests_.clear();
  seconds_ += MPI_Wtime() - start;
}

double OverlappedAllreduce::take_seconds() {
  const double s = seconds_;
  seconds_ = 0;
  return s;
}

void BlockingAllreduce::ready(int, std::span<float> gradient) {
  element_count(gradient);
  pending_.push_back(gradient);
}

void BlockingAllreduce::complete() {
  const double start = MPI_Wtime();
  for (std::span<float> gradient : pending_) {
    check_mpi(MPI_Allreduce(MPI_IN_PLACE, gradient.data(), element_count(gradient), MPI_FLOAT, MPI_SUM, comm_),
              "MPI_Allreduce");
  }
  pending_.clear();
  seconds_ += MPI_Wtime() - start;
}

double BlockingAllreduce::take_seconds() {
  const double s = seconds_;
  seconds_ = 0;
  return s;
}

}  // namespace weft::samples
