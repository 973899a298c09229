// MPI for weft-mlp-mpi: the session (MPI_Init_thread / MPI_Finalize around main's work), and the
// few collectives the sample calls outside the gradient exchange, each checked: a failing MPI call
// throws weft::Error naming the call and MPI's own message (with MPI_ERRORS_RETURN set on the
// world communicator, instead of the default abort without context).
//
//   MpiSession mpi(argc, argv);
//   if (!mpi.all(ok)) ...;                       // every rank learns whether any failed
//   mpi.broadcast(trainer.parameters(l), 0);
#pragma once

#include <mpi.h>

#include <span>

namespace weft::samples {

// Throws weft::Error "<call>: <MPI's error string>" unless rc is MPI_SUCCESS.
void check_mpi(int rc, const char* call);

class MpiSession {
 public:
  MpiSession(int& argc, char**& argv);
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  MPI_Comm comm() const { return MPI_COMM_WORLD; }

  // Whether `ok` holds on every rank (a collective: every rank calls it).
  bool all(bool ok) const;
  void broadcast(std::span<float> data, int root) const;
  // The largest `value` over the ranks, on every rank.
  double max(double value) const;
  // Element-wise maximum / sum over the ranks into `values` on rank 0 (other ranks' are unchanged).
  void max_to_root(std::span<double> values) const;
  void sum_to_root(std::span<double> values) const;
  // Ends every rank of the job with `status`: for a failure on one rank while the others wait in a
  // collective, which they would never leave.
  [[noreturn]] void abort(int status) const;

 private:
  int rank_ = 0, size_ = 1;
};

}  // namespace weft::samples
