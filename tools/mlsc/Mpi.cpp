//===- Mpi.cpp - Sweeps over MPI ranks ------------------------------------===//

#include "tools/mlsc/Mpi.h"

#ifdef MLSC_HAVE_MPI
// The C API only: Open MPI's deprecated C++ bindings need their own library.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#endif

#include <cstdlib>
#include <string>
#include <vector>

namespace mlsc::driver::mpi {

namespace {

bool Initialised = false;
unsigned Rank = 0, Ranks = 1;

/// Open MPI's launcher sets these for every process it starts.
unsigned fromEnv(const char *Name) {
  const char *V = std::getenv(Name);
  if (!V)
    return 0;
  char *End = nullptr;
  unsigned long N = std::strtoul(V, &End, 10);
  return End && *End == 0 && N < 1000000 ? static_cast<unsigned>(N) : 0;
}

#ifdef MLSC_HAVE_MPI
/// A gridded row as doubles: its point, verdict, wall, invalid check and
/// value, then its variables and values (whole numbers below 2^53 are
/// exact in a double).
constexpr size_t RowHead = 5;
/// A rank's counts before its rows: points, kept, invalid, the first
/// invalid point.
constexpr size_t Head = 4;

std::vector<double> pack(const GridResult &R, size_t NumVars,
                         size_t NumValues) {
  std::vector<double> Out;
  Out.reserve(Head + R.Rows.size() * (RowHead + NumVars + NumValues));
  Out.push_back(static_cast<double>(R.Points));
  Out.push_back(static_cast<double>(R.Kept));
  Out.push_back(static_cast<double>(R.Invalid));
  Out.push_back(static_cast<double>(R.FirstInvalidPoint));
  for (const GridRow &Row : R.Rows) {
    Out.push_back(static_cast<double>(Row.Point));
    Out.push_back(Row.Meets ? 1 : 0);
    Out.push_back(Row.Binding);
    Out.push_back(Row.InvalidCheck);
    Out.push_back(Row.InvalidValue);
    for (size_t K = 0; K < NumVars; ++K)
      Out.push_back(K < Row.Vars.size() ? Row.Vars[K] : 0);
    for (size_t K = 0; K < NumValues; ++K)
      Out.push_back(K < Row.Values.size() ? Row.Values[K] : 0);
  }
  return Out;
}

/// Gathers a variable-length buffer from every rank on rank 0, in rank
/// order.
template <class T>
std::vector<std::vector<T>> gatherAll(const std::vector<T> &Mine,
                                      MPI_Datatype Type) {
  int Count = static_cast<int>(Mine.size());
  std::vector<int> Counts(Ranks), Offsets(Ranks);
  MPI_Gather(&Count, 1, MPI_INT, Counts.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  size_t Total = 0;
  for (unsigned I = 0; I < Ranks; ++I) {
    Offsets[I] = static_cast<int>(Total);
    Total += static_cast<size_t>(Counts[I]);
  }
  std::vector<T> All(Rank == 0 ? Total : 0);
  MPI_Gatherv(Mine.data(), Count, Type, All.data(), Counts.data(),
              Offsets.data(), Type, 0, MPI_COMM_WORLD);
  std::vector<std::vector<T>> Out;
  if (Rank == 0)
    for (unsigned I = 0; I < Ranks; ++I)
      Out.emplace_back(All.begin() + Offsets[I],
                       All.begin() + Offsets[I] + Counts[I]);
  return Out;
}

GridResult gather(GridResult Mine, size_t NumVars, size_t NumValues) {
  std::vector<std::vector<double>> Parts =
      gatherAll(pack(Mine, NumVars, NumValues), MPI_DOUBLE);
  std::string Reason = Mine.Invalid ? Mine.FirstInvalidReason : "";
  std::vector<std::vector<char>> Reasons =
      gatherAll(std::vector<char>(Reason.begin(), Reason.end()), MPI_CHAR);
  std::vector<std::vector<double>> FirstVars = gatherAll(
      Mine.Invalid ? Mine.FirstInvalidVars : std::vector<double>(), MPI_DOUBLE);
  GridResult R;
  if (Rank != 0)
    return R;
  size_t Width = RowHead + NumVars + NumValues;
  for (unsigned I = 0; I < Ranks; ++I) {
    const std::vector<double> &P = Parts[I];
    R.Points += static_cast<size_t>(P[0]);
    R.Kept += static_cast<size_t>(P[1]);
    size_t Invalid = static_cast<size_t>(P[2]);
    size_t FirstInvalid = static_cast<size_t>(P[3]);
    // The first invalid point of the grid: the lowest index of the ranks'
    // first ones.
    if (Invalid && (!R.Invalid || FirstInvalid < R.FirstInvalidPoint)) {
      R.FirstInvalidReason.assign(Reasons[I].begin(), Reasons[I].end());
      R.FirstInvalidVars = FirstVars[I];
      R.FirstInvalidPoint = FirstInvalid;
    }
    R.Invalid += Invalid;
    for (size_t At = Head; At + Width <= P.size(); At += Width) {
      GridRow Row;
      Row.Point = static_cast<size_t>(P[At]);
      Row.Meets = P[At + 1] != 0;
      Row.Binding = static_cast<unsigned>(P[At + 2]);
      Row.InvalidCheck = static_cast<int>(P[At + 3]);
      Row.InvalidValue = P[At + 4];
      Row.Vars.assign(P.begin() + At + RowHead,
                      P.begin() + At + RowHead + NumVars);
      Row.Values.assign(P.begin() + At + RowHead + NumVars,
                        P.begin() + At + Width);
      R.Rows.push_back(std::move(Row));
    }
  }
  return R;
}
#endif

} // namespace

void init(int &Argc, char **&Argv) {
#ifdef MLSC_HAVE_MPI
  if (fromEnv("OMPI_COMM_WORLD_SIZE") < 2)
    return;
  // The command runs on its own thread (for its stack), never two at once.
  int Provided = 0;
  MPI_Init_thread(&Argc, &Argv, MPI_THREAD_SERIALIZED, &Provided);
  int R = 0, N = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &R);
  MPI_Comm_size(MPI_COMM_WORLD, &N);
  Rank = static_cast<unsigned>(R);
  Ranks = static_cast<unsigned>(N);
  Initialised = true;
#else
  (void)Argc;
  (void)Argv;
#endif
}

void finalize() {
#ifdef MLSC_HAVE_MPI
  if (Initialised)
    MPI_Finalize();
  Initialised = false;
#endif
}

bool active() { return Initialised && Ranks > 1; }
unsigned rank() { return Rank; }
unsigned ranks() { return Ranks; }

unsigned localRanks() {
  unsigned N = active() ? fromEnv("OMPI_COMM_WORLD_LOCAL_SIZE") : 0;
  return N ? N : 1;
}

bool fromRoot(bool Value) {
#ifdef MLSC_HAVE_MPI
  if (!active())
    return Value;
  int V = Value ? 1 : 0;
  MPI_Bcast(&V, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return V != 0;
#else
  return Value;
#endif
}

SweepSplit split() {
  SweepSplit S;
  S.Rank = Rank;
  S.Ranks = Ranks;
#ifdef MLSC_HAVE_MPI
  S.Gather = [](GridResult Mine, size_t NumVars, size_t NumValues) {
    return gather(std::move(Mine), NumVars, NumValues);
  };
#endif
  return S;
}

} // namespace mlsc::driver::mpi
