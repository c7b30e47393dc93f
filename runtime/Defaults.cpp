//===- Defaults.cpp - Defaults and plausible ranges of calibrated factors -===//

#include "runtime/Defaults.h"

#include "llvm/Support/ErrorHandling.h"

namespace mlsc::walls {

namespace {

const KernelClass Classes[] = {
    {"kernels.gemm", "GEMM (linear layers)", 0.80, 0.60, 0.90,
     "best-shape BF16 matmuls reach 87% of dense peak on A100 and 80% on "
     "H100 (Bekman, ML Engineering, MAMF table, 2024-25); FlashAttention-2 "
     "and -3 put optimised GEMM at 80-90% (arXiv 2307.08691, 2407.08608); "
     "real model shapes and FP8 (71% on H100) do worse"},
    {"kernels.attention", "attention, fused (FlashAttention)", 0.55, 0.35, 0.75,
     "FlashAttention-2 reaches 50-73% of A100 peak (Dao, arXiv 2307.08691); "
     "FlashAttention-3 up to 75% of H100 BF16 peak, about 60% in FP8 (Shah "
     "et al., arXiv 2407.08608); FlashAttention-1 25-40%"},
    {"kernels.attention_unfused", "attention, unfused (scores in memory)", 0.10,
     0.03, 0.25,
     "standard PyTorch attention reaches 5-14% of H100 peak, 2-3.5% causal "
     "(Shah et al., arXiv 2407.08608, Fig. 5); FlashAttention-2 is 3-10x "
     "faster than it on A100 (arXiv 2307.08691)"},
    {"kernels.conv", "convolution networks (cuDNN, whole model)", 0.25, 0.15,
     0.45,
     "ResNet-50 v1.5 mixed-precision training on one A100 reaches 16-29% of "
     "dense peak (NVIDIA DeepLearningExamples PyTorch, PaddlePaddle and "
     "MXNet tables, 8.2 GFLOP per image forward); TensorRT FP16 inference at "
     "batch 64-256 39-45%; includes batch-norm and element-wise time"},
};

const CalibratedRange Ranges[] = {
    {"kernels.gemm", 0.60, 0.90, "wall 3 (above)"},
    {"kernels.attention", 0.35, 0.75, "wall 3 (above)"},
    {"kernels.attention_unfused", 0.03, 0.25, "wall 3 (above)"},
    {"kernels.conv", 0.15, 0.45, "wall 3 (above)"},
    {"efficiency", 0.30, 0.90,
     "one eta for every kernel class: whole-model MFU of 30-55% in large "
     "training runs (ANCHORS T1-T4) up to the GEMM ceiling"},
    {"memory_efficiency", 0.60, 0.95,
     "an estimate: ANCHORS S1 calibrates 0.77 for vLLM decode on A100; "
     "streaming kernels reach 80-90% of nominal HBM bandwidth"},
    {"comm_efficiency", 0.50, 0.95,
     "an estimate: ANCHORS S3 gives 370 of 450 GB/s (0.82) for NCCL ring "
     "all-reduce on H100 NVLink; small messages reach far less"},
    {"service_cv", 0.50, 2.00,
     "an estimate: 1 is exponential service; chat traces with long-tailed "
     "output lengths exceed it"},
    {"memory_utilization", 0.80, 0.95,
     "vLLM's default gpu_memory_utilization is 0.9; deployments use 0.8 to "
     "0.95"},
};

} // namespace

llvm::ArrayRef<KernelClass> kernelClasses() { return Classes; }
llvm::ArrayRef<CalibratedRange> calibratedRanges() { return Ranges; }

const KernelClass &kernelClass(llvm::StringRef Field) {
  for (const KernelClass &K : Classes)
    if (Field == K.Field)
      return K;
  llvm::report_fatal_error("unknown kernel class");
}

} // namespace mlsc::walls
