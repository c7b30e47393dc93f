//===- CommunicationWall.cpp - Wall 14: collectives (alpha-beta) ----------===//
//
// Alpha-beta times of ring all-reduce, all-gather and reduce-scatter
// (Thakur, Rabenseifner, Gropp 2005), the tensor-parallel traffic of one
// transformer layer in inference (two all-reduces of the hidden state,
// Megatron-LM), and the nccl-tests bandwidth relations that published
// measurements are quoted in. beta is the per-rank link bandwidth in one
// direction; eta the achieved fraction of it (a calibrated factor). Tree,
// in-switch (NVLink SHARP) and hierarchical algorithms are not modelled.
// Known answers: test/unit/CommunicationTest.cpp.
//
//===----------------------------------------------------------------------===//

#include "passes/walls/CommunicationWall.h"
#include "passes/walls/Formula.h"

namespace mlsc::walls {

using namespace q;

namespace {
const Tokens OneToken = in<Tokens>(1.0);
} // namespace

Time ringAllReduceTime(Bytes Message, Number Ranks, Bandwidth LinkBW,
                       Number Efficiency, Time Latency) {
  // Reduce-scatter then all-gather: 2(N-1) steps, each moving M/N bytes.
  return 2.0 * ringAllGatherTime(Message, Ranks, LinkBW, Efficiency, Latency);
}

Time ringAllGatherTime(Bytes Message, Number Ranks, Bandwidth LinkBW,
                       Number Efficiency, Time Latency) {
  Number Steps = Ranks - 1.0;
  return Steps / Ranks * Message / (LinkBW * Efficiency) + Steps * Latency;
}

Time ringReduceScatterTime(Bytes Message, Number Ranks, Bandwidth LinkBW,
                           Number Efficiency, Time Latency) {
  return ringAllGatherTime(Message, Ranks, LinkBW, Efficiency, Latency);
}

Bytes tensorParallelMessage(Number Batch, Tokens Length, Number Hidden,
                            Bytes ActivationPrecision) {
  return Batch * (Length / OneToken) * Hidden * ActivationPrecision;
}

Time tensorParallelLayerTime(Bytes Message, Number TP, Bandwidth LinkBW,
                             Number Efficiency, Time Latency) {
  return 2.0 * ringAllReduceTime(Message, TP, LinkBW, Efficiency, Latency);
}

Bandwidth algorithmBandwidth(Bytes Message, Time Elapsed) {
  return Message / Elapsed;
}

Bandwidth allReduceBusBandwidth(Bandwidth AlgBW, Number Ranks) {
  return AlgBW * 2.0 * (Ranks - 1.0) / Ranks;
}

const Formula RingAllReduceTimeF = makeFormula<&ringAllReduceTime>(
    "ring_all_reduce_time", Wall::Communication,
    "T = 2(N-1)/N * M/(beta*eta) + 2(N-1)*alpha",
    "Thakur, Rabenseifner, Gropp, IJHPCA 2005; Patarasuk and Yuan, JPDC 2009");
const Formula RingAllGatherTimeF =
    makeFormula<&ringAllGatherTime>("ring_all_gather_time", Wall::Communication,
                                    "T = (N-1)/N * M/(beta*eta) + (N-1)*alpha",
                                    "Thakur, Rabenseifner, Gropp, IJHPCA 2005");
const Formula RingReduceScatterTimeF = makeFormula<&ringReduceScatterTime>(
    "ring_reduce_scatter_time", Wall::Communication,
    "T = (N-1)/N * M/(beta*eta) + (N-1)*alpha",
    "Thakur, Rabenseifner, Gropp, IJHPCA 2005");
const Formula TensorParallelMessageF = makeFormula<&tensorParallelMessage>(
    "tensor_parallel_message", Wall::Communication,
    "M = B * tokens * hidden * bytes_act",
    "Shoeybi et al., Megatron-LM, arXiv 1909.08053, section 3");
const Formula TensorParallelLayerTimeF = makeFormula<&tensorParallelLayerTime>(
    "tensor_parallel_layer_time", Wall::Communication,
    "T = 2 * T_allreduce(M, tp)",
    "Shoeybi et al., Megatron-LM, arXiv 1909.08053, Fig. 4 (two all-reduces "
    "per layer in the forward pass)");
const Formula AlgorithmBandwidthF = makeFormula<&algorithmBandwidth>(
    "algorithm_bandwidth", Wall::Communication, "algbw = M / t",
    "NVIDIA nccl-tests, doc/PERFORMANCE.md");
const Formula AllReduceBusBandwidthF = makeFormula<&allReduceBusBandwidth>(
    "all_reduce_bus_bandwidth", Wall::Communication, "busbw = algbw * 2(N-1)/N",
    "NVIDIA nccl-tests, doc/PERFORMANCE.md");

} // namespace mlsc::walls
