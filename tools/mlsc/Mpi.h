//===- Mpi.h - Sweeps over MPI ranks ------------------------------*- C++
//-*-===//
//
// Launched under `mpirun -n N` (Open MPI) with N > 1, `mlsc sweep` splits
// its grid over the ranks: rank r evaluates the points r, r + N, ... (dealt
// in turn, so that a costly corner of the grid is shared), the kept rows
// and counts are gathered on rank 0, and rank 0 puts them in grid order,
// sorts, cuts and prints exactly what one process would. Other commands run on
// rank 0 alone. Without MPI at configure time (MLSC_HAVE_MPI undefined), or
// outside mpirun, this is one process. docs/performance.md, "Sweeps on MPI".
//
//===----------------------------------------------------------------------===//
#ifndef MLSC_TOOLS_MLSC_MPI_H
#define MLSC_TOOLS_MLSC_MPI_H

#include "runtime/Query.h"

namespace mlsc::driver::mpi {

/// Initialises MPI when the process was launched by mpirun with more than
/// one rank (and the build has MPI); otherwise does nothing.
void init(int &Argc, char **&Argv);
/// Finalises MPI when init() initialised it.
void finalize();
/// More than one rank runs.
bool active();
unsigned rank();
unsigned ranks();
/// Ranks on this machine (1 outside MPI): the cores are shared among them.
unsigned localRanks();

/// Rank 0's \p Value on every rank (every rank must call it): a decision
/// that only rank 0 takes, so that all ranks take the same path.
bool fromRoot(bool Value);

/// This rank's share of a sweep: the gather that hands every rank's kept
/// rows to rank 0 (runtime/Query.h, SweepSplit). Only when active().
SweepSplit split();

} // namespace mlsc::driver::mpi

#endif
