#include "mpi_session.hpp"

#include <climits>
#include <cstdlib>
#include <string>

#include <weft/jit/error.hpp>

namespace weft::samples {

void check_mpi(int rc, const char* call) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(rc, text, &length) != MPI_SUCCESS) length = 0;
  throw Error(std::string(call) + " failed: " + (length > 0 ? std::string(text, static_cast<std::size_t>(length))
                                                            : "MPI error " + std::to_string(rc)));
}

MpiSession::MpiSession(int& argc, char**& argv) {
  // Only the main thread calls MPI; the OpenMP teams inside the passes never do.
  int provided = 0;
  check_mpi(MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
  check_mpi(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  check_mpi(MPI_Comm_rank(MPI_COMM_WORLD, &rank_), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(MPI_COMM_WORLD, &size_), "MPI_Comm_size");
}

MpiSession::~MpiSession() { MPI_Finalize(); }

bool MpiSession::all(bool ok) const {
  int value = ok ? 1 : 0, result = 0;
  check_mpi(MPI_Allreduce(&value, &result, 1, MPI_INT, MPI_MIN, comm()), "MPI_Allreduce (agreement)");
  return result == 1;
}

void MpiSession::broadcast(std::span<float> data, int root) const {
  if (data.size() > static_cast<std::size_t>(INT_MAX)) throw Error("MPI_Bcast: more than INT_MAX floats");
  check_mpi(MPI_Bcast(data.data(), static_cast<int>(data.size()), MPI_FLOAT, root, comm()), "MPI_Bcast");
}

double MpiSession::max(double value) const {
  double result = 0;
  check_mpi(MPI_Allreduce(&value, &result, 1, MPI_DOUBLE, MPI_MAX, comm()), "MPI_Allreduce (max)");
  return result;
}

namespace {

void reduce_to_root(std::span<double> values, MPI_Op op, MPI_Comm comm, int rank) {
  if (values.size() > static_cast<std::size_t>(INT_MAX)) throw Error("MPI_Reduce: more than INT_MAX values");
  const int count = static_cast<int>(values.size());
  if (rank == 0) {
    check_mpi(MPI_Reduce(MPI_IN_PLACE, values.data(), count, MPI_DOUBLE, op, 0, comm), "MPI_Reduce");
  } else {
    check_mpi(MPI_Reduce(values.data(), nullptr, count, MPI_DOUBLE, op, 0, comm), "MPI_Reduce");
  }
}

}  // namespace

void MpiSession::max_to_root(std::span<double> values) const { reduce_to_root(values, MPI_MAX, comm(), rank_); }

void MpiSession::sum_to_root(std::span<double> values) const { reduce_to_root(values, MPI_SUM, comm(), rank_); }

void MpiSession::abort(int status) const {
  MPI_Abort(comm(), status);
  std::abort();
}

}  // namespace weft::samples
