//===- Communication.cpp - Wall 14: collectives (alpha-beta) --------------===//
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

#include "runtime/walls/Formulas.h"

namespace mlsc::walls {

using namespace q;

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

} // namespace mlsc::walls
