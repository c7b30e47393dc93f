//===- Parallel.cpp - Deterministic parallel loops ------------------------===//

#include "runtime/Parallel.h"

#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/Threading.h"

#include <algorithm>
#include <chrono>
#include <future>
#include <vector>

namespace mlsc {

unsigned defaultThreads() {
  return std::max(1u, llvm::hardware_concurrency().compute_thread_count());
}

void parallelChunks(size_t N, unsigned Threads, size_t MinChunk,
                    llvm::function_ref<void(unsigned, size_t, size_t)> Body,
                    const std::function<void()> &Poll) {
  size_t Most = std::max<size_t>(1, N / std::max<size_t>(1, MinChunk));
  unsigned Chunks = static_cast<unsigned>(
      std::max<size_t>(1, std::min<size_t>(std::max(1u, Threads), Most)));
  size_t Size = (N + Chunks - 1) / Chunks;
  if (Chunks == 1 && !Poll) {
    Body(0, 0, N);
    return;
  }
  llvm::ThreadPool Pool(llvm::hardware_concurrency(Chunks));
  std::vector<std::shared_future<void>> Done;
  for (unsigned C = 0; C < Chunks; ++C) {
    size_t Begin = std::min(N, C * Size), End = std::min(N, Begin + Size);
    Done.push_back(Pool.async([=] { Body(C, Begin, End); }));
  }
  for (std::shared_future<void> &F : Done)
    while (F.wait_for(std::chrono::milliseconds(100)) !=
           std::future_status::ready)
      if (Poll)
        Poll();
}

} // namespace mlsc
