//===- Parallel.h - Deterministic parallel loops -------------------*- C++
//-*-===//
//
// The one way mlsc spreads work over cores (sweeps, Pareto grids, table
// formatting, benchmarks): [0, N) is cut into at most Threads contiguous
// chunks, fixed by N and Threads alone, run on an llvm::ThreadPool. Each
// chunk writes only its own slots, so the results - and every byte printed
// from them - do not depend on the thread count or the schedule.
//
//===----------------------------------------------------------------------===//
#ifndef MLSC_RUNTIME_PARALLEL_H
#define MLSC_RUNTIME_PARALLEL_H

#include "llvm/ADT/STLFunctionalExtras.h"

#include <cstddef>
#include <functional>

namespace mlsc {

/// Every core of the machine, for a default thread count.
unsigned defaultThreads();

/// Runs Body(Chunk, Begin, End) over [0, N) in at most \p Threads chunks
/// of at least \p MinChunk items (one chunk on the calling thread when
/// that is all there is). While the chunks run, \p Poll is called on the
/// calling thread about every 100 ms.
void parallelChunks(
    size_t N, unsigned Threads, size_t MinChunk,
    llvm::function_ref<void(unsigned Chunk, size_t Begin, size_t End)> Body,
    const std::function<void()> &Poll = nullptr);

} // namespace mlsc

#endif
