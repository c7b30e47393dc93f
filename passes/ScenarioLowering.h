//===- ScenarioLowering.h - One scenario to its graph -------------*- C++
//-*-===//
//
// The lower-to-graph pass, split by workload: LowerToGraph.cpp holds the
// pass, leaves, expressions and conditions; LowerDecoder.cpp lowers a
// decoder LLM's capacity and step times (walls 1-6, 13); LowerServing.cpp
// its requests and queue (walls 4, 5, 7); LowerPerSample.cpp CNN and
// encoder inference and training.
//
//===----------------------------------------------------------------------===//
#ifndef MLSC_PASSES_SCENARIOLOWERING_H
#define MLSC_PASSES_SCENARIOLOWERING_H

#include "passes/GraphBuilder.h"
#include "passes/Pipeline.h"

#include <array>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace mlsc {

/// Lowers one scenario.
class ScenarioLowering {
public:
  ScenarioLowering(Compilation &C, const ir::Entity &S, graph::Graph &G)
      : C(C), S(S), G(G), B(G) {
    G.Scenario = S.Name;
  }

  void run();

  /// Lowers an SLA condition or an assert of this scenario.
  void condition(const ir::Expr &E, llvm::SMRange R, bool IsAssert,
                 const std::string &Message);

  /// For solve and sweep: the node of an expression over this scenario's
  /// metrics and fields, appended to the graph; nullopt when it reads a
  /// metric the graph lacks (named in \p Missing).
  std::optional<uint32_t> queryExpr(const ir::Expr &E, std::string &Missing) {
    return expr(E, Missing);
  }
  /// The leaf that entity \p E's field \p Path lowered to; -1 when the graph
  /// never reads it, -2 when it reads it as a derived (non-leaf) value.
  int leafFor(const ir::Entity &E, llvm::StringRef Path);

private:
  Compilation &C;
  const ir::Entity &S;
  graph::Graph &G;
  GraphBuilder B;
  std::map<const ir::Field *, uint32_t> FieldNodes;
  std::map<const ir::Let *, uint32_t> LetNodes;
  bool Failed = false;
  std::vector<std::string> MissingInputs;
  std::vector<const ir::Entity *> MissingOwners;

  // ---- LowerToGraph.cpp: leaves, expressions, diagnostics
  const ir::Entity *entity(const ir::Entity &E, llvm::StringRef Path);
  void missing(const ir::Entity &Owner, llvm::StringRef Path,
               llvm::StringRef Why);
  void reportMissing();
  std::optional<uint32_t> field(const ir::Entity &E, llvm::StringRef Path);
  uint32_t required(const ir::Entity &E, llvm::StringRef Path,
                    llvm::StringRef Why);
  uint32_t orDefault(const ir::Entity &E, llvm::StringRef Path, double Value,
                     Dimension D, const std::string &Why,
                     bool Calibrated = false);
  std::optional<uint32_t> expr(const ir::Expr &E, std::string &Missing);
  std::optional<uint32_t> fieldRef(const ir::Expr &E);
  void checkFraction(const ir::Entity &E, llvm::StringRef Path);
  /// A count, size or rate that must be above zero (a chunk, a bandwidth).
  void checkPositive(const ir::Entity &E, llvm::StringRef Path);
  double foldedNumber(const ir::Entity &E, llvm::StringRef Path);
  std::string enumValue(const ir::Entity &E, llvm::StringRef Path);
  void finishMetrics();
  static Dimension unit(const char *Text);
  /// A zero leaf with a note: "no ... is modelled".
  uint32_t none(Dimension D, const char *Spelling, const char *Why);

  // ---- The system a workload runs on.
  struct System {
    const ir::Entity *Accel = nullptr;
    const ir::Entity *Node = nullptr; ///< owns the fabrics; null when bare
    uint32_t Devices = 0, Nodes = 0, Overhead = 0;
  };
  std::optional<System> system(const ir::Entity &Sys);

  // ---- Wall 3: the efficiency of each kernel class, or the workload's one
  // `efficiency` for all of them.
  uint32_t kernelEfficiency(const ir::Entity &W, llvm::StringRef Class);

  // ---- LowerDecoder.cpp
  /// The machine a phase runs on: the roofline, the fabric of its
  /// tensor-parallel all-reduces (none for a bare accelerator), and the
  /// kernel-class efficiencies of wall 3.
  struct Roofline {
    uint32_t Peak, EtaGemm, EtaAttention, BW, EtaMem;
    std::optional<uint32_t> FabricBW, FabricLatency;
    uint32_t EtaComm, Layers, Hidden, ActivationBytes, TP;
    /// Wall 6: weights stream in at this bandwidth, layer by layer.
    std::optional<uint32_t> InjectBW;
    uint32_t Params = 0, WeightBytes = 0;
  };

  struct DraftModel {
    uint32_t Params, Layers, AttnDim, Hidden, Weights, KV, Tokens, Acceptance;
  };

  /// What the decoder's stages share.
  struct Decoder {
    const ir::Entity *W = nullptr;
    System Sys;
    Roofline Machine;
    uint32_t Params, ComputeParams, Layers, Heads, AttnDim, HeadDim;
    uint32_t Bytes, WeightBytes, KVBytes, Peak, BW, Capacity, TDP;
    uint32_t Batch, Prompt, Output, TP, PP, OneToken, Context;
    /// Expert parallelism (MoE only; 1 otherwise) and the devices of one
    /// replica, tp * pp * ep.
    uint32_t EP = 0, ReplicaDevices = 0;
    uint32_t Weights, KV, Sequence, MaxSequences;
    std::optional<uint32_t> FFN;
    std::optional<DraftModel> Draft;
    /// MoE: total and active parameters, experts, top_k.
    std::optional<std::array<uint32_t, 4>> Moe;
    bool Static = false;
    bool Fused = true;                  ///< fused attention (FlashAttention)
    std::optional<uint32_t> GemmFactor; ///< pruning: GEMM time factor
    std::optional<uint32_t> Chunk;
    uint32_t PrefillTime = 0, DecodeStep = 0, TPOT = 0;
  };

  void decoder(const ir::Entity &W, const System &Sys);
  bool decoderInputs(Decoder &D, const ir::Entity &Model,
                     const ir::Entity &Precision);
  void pruning(Decoder &D);
  void decoderCapacity(Decoder &D);
  void decoderSteps(Decoder &D);
  std::optional<DraftModel> draftModel(const ir::Entity &W, uint32_t TP,
                                       uint32_t PP, uint32_t Bytes,
                                       uint32_t KVBytes);
  /// Weight bytes a pass over \p Tokens tokens reads: all of them for a
  /// dense model, the experts it touches for an MoE model.
  uint32_t weightsRead(const Decoder &D, uint32_t Tokens,
                       const std::string &Name);
  /// A phase: `<Phase>.efficiency`, `.compute_time`, `.memory_time`,
  /// `.intensity`, `.roofline_time`, `.streaming_time` (wall 6),
  /// `.comm_time` (two all-reduces of the hidden state of \p Sequences x
  /// \p Tokens per layer), and the step time \p TimeName.
  uint32_t phase(const std::string &Phase, const std::string &TimeName,
                 const Roofline &M, uint32_t Sequences, uint32_t Tokens,
                 uint32_t Flops, uint32_t AttentionFlops, uint32_t Bytes);

  // ---- LowerServing.cpp
  void serving(Decoder &D);
  void fidelity(Decoder &D);

  // ---- LowerPerSample.cpp
  void perSample(const ir::Entity &W, const ir::Entity &Model,
                 const ir::Entity &Precision, const System &Sys,
                 bool Convolutional, bool Training);
};

/// Resolves the main file's solve and sweep blocks (LowerQueries.cpp).
void lowerQueries(Compilation &C,
                  const std::vector<const ir::Entity *> &Scenarios,
                  std::vector<std::unique_ptr<ScenarioLowering>> &Lowerings);

} // namespace mlsc

#endif
