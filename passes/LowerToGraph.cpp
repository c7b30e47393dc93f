//===- LowerToGraph.cpp - Scenarios to evaluation graphs ------------------===//
//
// Consumes the folded IR; produces one graph::Graph per scenario of the main
// file. Leaves are the IR values the walls read (with their origins) and the
// documented defaults they fall back on; derived fields are lowered as
// arithmetic over their own inputs, so changing a leaf later changes
// everything computed from it. Then each implemented wall adds its formulas
// and names its metrics, and the scenario's SLA conditions and the file's
// asserts become boolean nodes. Diagnoses MissingInput, MetricUnavailable
// (a warning: the condition stays unknown) and AssertSpansScenarios.
//
//===----------------------------------------------------------------------===//

#include "passes/GraphBuilder.h"
#include "passes/Pipeline.h"
#include "ir/Units.h"
#include "passes/walls/BatchingWall.h"
#include "passes/walls/CommunicationWall.h"
#include "passes/walls/ComputeWall.h"
#include "passes/walls/EnergyWall.h"
#include "passes/walls/MemoryWall.h"
#include "passes/walls/ServingWall.h"
#include "passes/walls/TailLatencyWall.h"

#include "llvm/ADT/StringExtras.h"

#include <fmt/format.h>

#include <map>
#include <set>

namespace mlsc {

namespace {

using graph::Graph;
using graph::LeafOrigin;
using graph::Op;

/// Lowers one scenario.
class ScenarioLowering {
public:
  ScenarioLowering(Compilation &C, const ir::Entity &S, Graph &G)
      : C(C), S(S), G(G), B(G) {
    G.Scenario = S.Name;
  }

  void run() {
    const ir::Entity *Workload = entity(S, "workload");
    const ir::Entity *System = entity(S, "system");
    if (!Workload || !System)
      return; // already diagnosed by build-ir
    const ir::Field *Mode = Workload->field("mode");
    if (Mode && Mode->Folded && Mode->Folded->Text == "training") {
      G.Training = true;
      finishMetrics();
      return;
    }
    inference(*Workload, *System);
    reportMissing();
    finishMetrics();
  }

  /// Lowers an SLA condition or an assert of this scenario.
  void condition(const ir::Expr &E, llvm::SMRange R, bool IsAssert,
                 const std::string &Message) {
    graph::Condition Cond;
    Cond.Range = R;
    Cond.Text = ast::sourceText(E.Range);
    Cond.IsAssert = IsAssert;
    Cond.Message = Message;
    std::string Missing;
    std::optional<uint32_t> Node = expr(E, Missing);
    if (Node) {
      Cond.NodeId = static_cast<int>(*Node);
    } else if (!Missing.empty()) {
      Cond.Missing = Missing;
      C.Diags.report(DiagKind::MetricUnavailable, E.Range,
                     fmt::format("`{}` is not computed yet: no implemented "
                                 "wall provides it (see `mlsc walls`); this "
                                 "condition stays unknown",
                                 Missing));
    }
    G.Conditions.push_back(std::move(Cond));
  }

private:
  Compilation &C;
  const ir::Entity &S;
  Graph &G;
  GraphBuilder B;
  std::map<const ir::Field *, uint32_t> FieldNodes;
  std::map<const ir::Let *, uint32_t> LetNodes;
  bool Failed = false;
  std::vector<std::string> MissingInputs;
  std::vector<const ir::Entity *> MissingOwners;

  const ir::Entity *entity(const ir::Entity &E, llvm::StringRef Path) {
    const ir::Field *F = E.field(Path);
    if (!F || !F->Folded || F->Folded->Kind != ir::TypeKind::Entity)
      return nullptr;
    return F->Folded->Ref;
  }

  void missing(const ir::Entity &Owner, llvm::StringRef Path,
               llvm::StringRef Why) {
    MissingInputs.push_back(
        fmt::format("`{}.{}` ({})", Owner.Name, Path.str(), Why.str()));
    if (!llvm::is_contained(MissingOwners, &Owner))
      MissingOwners.push_back(&Owner);
    Failed = true;
  }

  /// One diagnostic per scenario lists every missing input.
  void reportMissing() {
    if (MissingInputs.empty())
      return;
    Diagnostic &D = C.Diags.report(
        DiagKind::MissingInput, S.NameRange,
        fmt::format("scenario `{}` needs {}", S.Name,
                    llvm::join(MissingInputs, ", ")));
    for (const ir::Entity *Owner : MissingOwners)
      D.note(DiagKind::DeclaredHere, Owner->NameRange,
             fmt::format("{} `{}` is declared here", Owner->Kind,
                         Owner->Name));
  }

  /// The node of a field: its literal as a leaf, or its expression lowered.
  std::optional<uint32_t> field(const ir::Entity &E, llvm::StringRef Path) {
    const ir::Field *F = E.field(Path);
    if (!F || !F->Value || F->Value->Ty.Kind != ir::TypeKind::Quantity)
      return std::nullopt;
    auto It = FieldNodes.find(F);
    if (It != FieldNodes.end())
      return It->second;
    std::optional<uint32_t> Id;
    if (F->Value->Kind == ir::ExprKind::Number) {
      LeafOrigin O;
      O.Entity = &E;
      O.Field = F->Path;
      O.Range = F->Range;
      O.Source = F->Source;
      O.Notes = F->Notes;
      O.Spelling = F->Value->Spelling;
      O.Calibrated =
          F->Path == "efficiency" || F->Path == "memory_efficiency" ||
          F->Path == "service_cv";
      Id = B.leaf(F->Value->Number, F->Value->Ty.Dim, std::move(O));
    } else {
      std::string Ignored;
      Id = expr(*F->Value, Ignored);
    }
    if (Id) {
      B.name(*Id, E.Name + "." + F->Path);
      FieldNodes[F] = *Id;
    }
    return Id;
  }

  uint32_t required(const ir::Entity &E, llvm::StringRef Path,
                    llvm::StringRef Why) {
    if (std::optional<uint32_t> Id = field(E, Path))
      return *Id;
    missing(E, Path, Why);
    return B.constant(0, "placeholder for a missing input");
  }

  /// A field, or a documented default when the field is not given.
  uint32_t orDefault(const ir::Entity &E, llvm::StringRef Path, double Value,
                     Dimension D, const char *Why, bool Calibrated = false) {
    if (std::optional<uint32_t> Id = field(E, Path))
      return *Id;
    LeafOrigin O;
    O.Entity = &E;
    O.Field = Path.str();
    O.Spelling = fmt::format("{}", Value);
    O.Notes.push_back(Why);
    O.Assumed = true;
    O.Calibrated = Calibrated;
    uint32_t Id = B.leaf(Value, D, std::move(O));
    B.name(Id, E.Name + "." + Path.str());
    return Id;
  }

  /// Lowers an IR expression; nullopt when it uses an unavailable metric
  /// (named in \p Missing) or cannot be lowered.
  std::optional<uint32_t> expr(const ir::Expr &E, std::string &Missing) {
    using K = ir::ExprKind;
    switch (E.Kind) {
    case K::Number: {
      LeafOrigin O;
      O.Range = E.Range;
      O.Spelling = E.Spelling;
      return B.leaf(E.Number, E.Ty.Dim, std::move(O));
    }
    case K::Bool: {
      LeafOrigin O;
      O.Range = E.Range;
      O.Spelling = E.BoolValue ? "true" : "false";
      return B.leaf(E.BoolValue ? 1 : 0, Dimension(), std::move(O), "", true);
    }
    case K::FieldRef:
      return fieldRef(E);
    case K::MetricRef: {
      std::string Name = llvm::join(E.Path, ".");
      if (E.Target != &S) {
        Missing = E.Target->Name + "." + Name;
        return std::nullopt;
      }
      int Id = G.find(Name);
      if (Id < 0) {
        Missing = S.Name + "." + Name;
        return std::nullopt;
      }
      return static_cast<uint32_t>(Id);
    }
    case K::LetRef: {
      auto It = LetNodes.find(E.LetTarget);
      if (It != LetNodes.end())
        return It->second;
      if (!E.LetTarget->Value)
        return std::nullopt;
      std::optional<uint32_t> Id = expr(*E.LetTarget->Value, Missing);
      if (Id) {
        LetNodes[E.LetTarget] = *Id;
        B.name(*Id, E.LetTarget->Name);
      }
      return Id;
    }
    case K::Unary: {
      std::optional<uint32_t> O = expr(*E.Operands[0], Missing);
      if (!O)
        return std::nullopt;
      if (E.UOp == ast::UnaryOp::Plus)
        return O;
      bool Not = E.UOp == ast::UnaryOp::Not;
      return B.op(Not ? Op::Not : Op::Neg, {*O}, E.Ty.Dim, Not);
    }
    case K::Binary: {
      std::optional<uint32_t> L = expr(*E.Operands[0], Missing);
      std::optional<uint32_t> R = expr(*E.Operands[1], Missing);
      if (!L || !R || E.BOp == ast::BinaryOp::In)
        return std::nullopt;
      static const Op Ops[] = {Op::Add, Op::Sub, Op::Mul, Op::Div, Op::Pow,
                               Op::Lt,  Op::Le,  Op::Gt,  Op::Ge,  Op::Eq,
                               Op::Ne,  Op::Add, Op::And, Op::Or};
      Op O = Ops[static_cast<unsigned>(E.BOp)];
      return B.op(O, {*L, *R}, E.Ty.Dim, E.Ty.Kind == ir::TypeKind::Bool);
    }
    case K::Call: {
      std::vector<uint32_t> In;
      for (const ir::ExprPtr &A : E.Operands) {
        std::optional<uint32_t> Id = expr(*A, Missing);
        if (!Id)
          return std::nullopt;
        In.push_back(*Id);
      }
      static const Op Ops[] = {Op::Min,   Op::Max, Op::Ceil, Op::Floor,
                               Op::Round, Op::Abs, Op::Sqrt, Op::Log,
                               Op::Log2,  Op::Log10, Op::Exp};
      return B.op(Ops[static_cast<unsigned>(E.Fn)], In, E.Ty.Dim);
    }
    default:
      return std::nullopt;
    }
  }

  /// Follows entity-typed fields to the final field's node.
  std::optional<uint32_t> fieldRef(const ir::Expr &E) {
    const ir::Entity *Target = E.Target;
    size_t Begin = 0;
    while (Target) {
      bool Advanced = false;
      for (size_t End = E.Path.size(); End > Begin; --End) {
        std::string Joined;
        for (size_t I = Begin; I < End; ++I)
          Joined += (I > Begin ? "." : "") + E.Path[I];
        if (!Target->field(Joined))
          continue;
        if (End == E.Path.size())
          return field(*Target, Joined);
        Target = entity(*Target, Joined);
        Begin = End;
        Advanced = true;
        break;
      }
      if (!Advanced)
        return std::nullopt;
    }
    return std::nullopt;
  }

  static Dimension unit(const char *Text) {
    UnitParseError Err;
    return parseUnit(Text, Err)->Dim;
  }

  void inference(const ir::Entity &W, const ir::Entity &System) {
    const ir::Entity *Model = entity(W, "model");
    const ir::Entity *Precision = entity(W, "precision");
    if (!Model || !Precision)
      return;
    // The system: an accelerator, a node of them, or a cluster of nodes.
    const ir::Entity *Accel = nullptr;
    std::optional<uint32_t> Devices, Nodes, Overhead;
    const ir::Entity *NodeEntity = nullptr; // owns the intra-node fabric
    const Dimension Watt = unit("W");
    if (System.Kind == "accelerator") {
      Accel = &System;
      Devices = B.constant(1, "a bare accelerator is one device");
      Nodes = B.constant(0, "a bare accelerator has no node around it");
      LeafOrigin NoNode;
      NoNode.Spelling = "0 W";
      NoNode.Notes.push_back("no node around a bare accelerator");
      Overhead = B.leaf(0, Watt, std::move(NoNode));
    } else if (System.Kind == "node") {
      NodeEntity = &System;
      Accel = entity(System, "accelerator");
      Devices = required(System, "count", "accelerators per node");
      Nodes = B.constant(1, "one node");
      Overhead = orDefault(System, "overhead", 0, Watt,
                           "default: no power beyond the accelerators");
    } else if (System.Kind == "cluster") {
      const ir::Entity *Node = entity(System, "node");
      NodeEntity = Node;
      if (Node) {
        Accel = entity(*Node, "accelerator");
        Nodes = required(System, "nodes", "node count");
        Devices = B.op(Op::Mul,
                       {required(*Node, "count", "accelerators per node"),
                        *Nodes},
                       Dimension());
        Overhead = orDefault(*Node, "overhead", 0, Watt,
                             "default: no power beyond the accelerators");
      }
    }
    if (!Accel || !Devices)
      return;
    B.name(*Devices, "devices");
    const ir::Field *Family = Model->field("family");
    if (Family && Family->Folded &&
        (Family->Folded->Text == "cnn" || Family->Folded->Text == "encoder")) {
      perSample(W, *Model, *Precision, *Accel, *Devices, *Nodes, *Overhead,
                Family->Folded->Text == "cnn");
      return;
    }

    const Dimension One;
    const Dimension Tok = unit("tok");
    const char *KVWhy = "the KV cache and attention FLOPs (walls 1-2)";
    uint32_t Params = required(*Model, "params", "weight bytes (wall 2)");
    std::optional<uint32_t> Active = field(*Model, "active_params");
    uint32_t Layers = required(*Model, "layers", KVWhy);
    uint32_t Heads = required(*Model, "heads", KVWhy);
    std::optional<uint32_t> HeadDim = field(*Model, "head_dim");
    if (!HeadDim) {
      uint32_t Hidden = required(*Model, "hidden", KVWhy);
      HeadDim = B.op(Op::Div, {Hidden, Heads}, One);
      B.name(*HeadDim, Model->Name + ".head_dim");
    }
    std::optional<uint32_t> KVHeads = field(*Model, "kv_heads");
    if (!KVHeads)
      KVHeads = Heads; // multi-head attention: one KV head per head
    uint32_t AttnDim = B.op(Op::Mul, {Heads, *HeadDim}, One);
    B.name(AttnDim, Model->Name + ".attention_dim");

    uint32_t Bytes = required(*Precision, "bytes", "bytes per parameter");
    std::string PeakPath = "peak." + Precision->Name;
    uint32_t Peak =
        required(*Accel, PeakPath,
                 fmt::format("its dense {} peak; the workload runs in {}",
                             Precision->Name, Precision->Name));
    uint32_t BW = required(*Accel, "hbm.bandwidth", "memory bandwidth");
    uint32_t Capacity = required(*Accel, "hbm.capacity", "memory capacity");
    uint32_t TDP = required(*Accel, "tdp", "power draw (wall 18)");

    uint32_t Batch = orDefault(W, "batch", 1, One, "default: one sequence");
    uint32_t Prompt = required(W, "prompt", "the prefill length");
    uint32_t Output = required(W, "output", "the decode length");
    uint32_t TP = orDefault(W, "parallel.tp", 1, One, "default: no tensor "
                                                      "parallelism");
    uint32_t PP = orDefault(W, "parallel.pp", 1, One, "default: no pipeline "
                                                      "parallelism");
    uint32_t Eta = orDefault(
        W, "efficiency", 1, One,
        "default: the ideal roofline (eta = 1) until the software-efficiency "
        "wall (3) supplies kernel-class efficiencies",
        /*Calibrated=*/true);
    uint32_t EtaMem = orDefault(W, "memory_efficiency", 1, One,
                                "default: the full HBM bandwidth",
                                /*Calibrated=*/true);
    // Wall 14: tensor-parallel all-reduces over the node's intra fabric.
    Roofline Machine{Peak, Eta, BW, EtaMem, std::nullopt, std::nullopt, 0,
                     Layers, 0, Bytes, TP};
    const ir::Entity *Fabric =
        NodeEntity ? entity(*NodeEntity, "intra") : nullptr;
    if (Fabric) {
      Machine.FabricBW = required(*Fabric, "bandwidth", "the TP fabric");
      Machine.FabricLatency = required(*Fabric, "latency", "the TP fabric");
    } else if (NodeEntity && foldedNumber(W, "parallel.tp") > 1) {
      missing(*NodeEntity, "intra",
              "a fabric for the tensor-parallel all-reduces (wall 14)");
    }
    Machine.EtaComm =
        orDefault(W, "comm_efficiency", 1, One,
                  "default: the fabric's full bandwidth", /*Calibrated=*/true);
    std::optional<uint32_t> Hidden = field(*Model, "hidden");
    Machine.Hidden = Hidden ? *Hidden : AttnDim;
    if (Failed)
      return;
    B.name(TP, "tp");
    B.name(PP, "pp");
    B.name(Batch, "batch");
    B.name(Capacity, "device_memory");

    // Wall 2: capacity.
    uint32_t Weights =
        B.apply(walls::WeightBytesF, {Params, Bytes, TP, PP},
                "weights_per_device");
    // The KV cache may be stored in its own precision (fp8 KV, bf16 weights).
    uint32_t KVBytes = Bytes;
    if (const ir::Entity *KVPrecision = entity(W, "kv_precision"))
      KVBytes = required(*KVPrecision, "bytes", "bytes per KV-cache element");
    uint32_t KV = B.apply(walls::KVBytesPerTokenF,
                          {Layers, *KVHeads, *HeadDim, KVBytes},
                          "kv_bytes_per_token");
    uint32_t Sequence = B.op(Op::Add, {Prompt, Output}, Tok);
    B.name(Sequence, "sequence_length");

    // Wall 4: a draft model for speculative decoding shares the devices,
    // batch, precision and tensor parallelism; its weights and KV cache
    // count against memory.
    std::optional<DraftModel> Draft = draftModel(W, TP, PP, Bytes, KVBytes);
    uint32_t Memory;
    if (Draft) {
      uint32_t TargetMemory = B.apply(walls::MemoryPerDeviceF,
                                      {Weights, KV, Batch, Sequence, TP},
                                      "target.memory_per_device");
      uint32_t DraftMemory =
          B.apply(walls::MemoryPerDeviceF,
                  {Draft->Weights, Draft->KV, Batch, Sequence, TP},
                  "draft.memory_per_device");
      Memory = B.op(Op::Add, {TargetMemory, DraftMemory},
                    G.Nodes[TargetMemory].Dim);
      B.name(Memory, "memory_per_device");
    } else {
      Memory = B.apply(walls::MemoryPerDeviceF,
                       {Weights, KV, Batch, Sequence, TP},
                       "memory_per_device");
    }
    uint32_t Fits = B.op(Op::Le, {Memory, Capacity}, One, true);
    B.name(Fits, "memory_fits");
    uint32_t TPFits = B.op(Op::Le, {B.op(Op::Mul, {TP, PP}, One), *Devices},
                           One, true);
    B.name(TPFits, "parallelism_fits");
    // Wall 5: the batch must fit a paged KV cache in the memory the serving
    // runtime leaves free (vLLM's defaults: 16-token blocks, 90% usable).
    uint32_t Block = orDefault(W, "kv_block", 16, Tok,
                               "default: vLLM's 16-token KV blocks");
    if (W.field("memory_utilization"))
      checkFraction(W, "memory_utilization");
    uint32_t Usable = orDefault(
        W, "memory_utilization", 0.9, One,
        "default: vLLM's gpu_memory_utilization; the rest is runtime reserve",
        /*Calibrated=*/true);
    // (The dimension is read before B.op can grow G.Nodes.)
    const Dimension Data = G.Nodes[Capacity].Dim;
    uint32_t Unused =
        B.op(Op::Sub, {B.constant(1, "all of the memory"), Usable}, One);
    uint32_t Reserve = B.op(Op::Mul, {Capacity, Unused}, Data);
    B.name(Reserve, "runtime_reserve");
    uint32_t PerSequence = B.apply(walls::PagedKVBytesPerSequenceF,
                                   {Sequence, Block, KV, TP},
                                   "kv_bytes_per_sequence");
    uint32_t AllWeights = Weights;
    if (Draft) {
      const Dimension Data = G.Nodes[Weights].Dim;
      uint32_t DraftPerSequence = B.apply(
          walls::PagedKVBytesPerSequenceF, {Sequence, Block, Draft->KV, TP},
          "draft.kv_bytes_per_sequence");
      PerSequence = B.op(Op::Add, {PerSequence, DraftPerSequence}, Data);
      AllWeights = B.op(Op::Add, {Weights, Draft->Weights}, Data);
    }
    uint32_t MaxSequences =
        B.apply(walls::MaxConcurrentSequencesF,
                {Capacity, AllWeights, Reserve, PerSequence},
                "max_concurrent_sequences");
    uint32_t BatchFits = B.op(Op::Le, {Batch, MaxSequences}, One, true);
    B.name(BatchFits, "batch_fits");
    uint32_t Feasible = B.op(
        Op::And, {B.op(Op::And, {Fits, TPFits}, One, true), BatchFits}, One,
        true);
    B.name(Feasible, "feasible");

    // Walls 1 and 2 for each phase; decode at the mean context of the
    // generated sequence.
    uint32_t ComputeParams = Active ? *Active : Params;
    LeafOrigin PerStep;
    PerStep.Spelling = "1 tok";
    PerStep.Notes.push_back("one new token per sequence per decode step");
    uint32_t OneToken = B.leaf(1, Tok, std::move(PerStep));
    phase("prefill", "prefill_time", Machine, Batch, Prompt,
          B.apply(walls::PrefillFlopsF,
                  {ComputeParams, Layers, AttnDim, Batch, Prompt, TP},
                  "prefill.flops"),
          B.apply(walls::PrefillBytesF, {Weights, KV, Batch, Prompt, TP},
                  "prefill.bytes"));
    uint32_t HalfOutput =
        B.op(Op::Div, {Output, B.constant(2, "mean over the decode")}, Tok);
    B.name(HalfOutput, "decode.half_output");
    uint32_t Context = B.op(Op::Add, {Prompt, HalfOutput}, Tok);
    B.name(Context, "decode.context");
    uint32_t Step = phase(
        "decode", "decode_step_time", Machine, Batch, OneToken,
        B.apply(walls::DecodeStepFlopsF,
                {ComputeParams, Layers, AttnDim, Batch, Context, TP},
                "decode.flops"),
        B.apply(walls::DecodeStepBytesF, {Weights, KV, Batch, Context, TP},
                "decode.bytes"));
    B.apply(walls::MemoryTimeF, {Weights, BW, EtaMem},
            "decode.weight_read_time");
    B.apply(walls::DecodeCrossoverBatchF,
            {ComputeParams, Layers, AttnDim, Context, TP, Weights, KV, Peak,
             Eta, BW, EtaMem},
            "decode.crossover_batch");
    B.apply(walls::RidgePointF, {Peak, BW}, "ridge_point");

    // Wall 5: the throughput-optimal batch under a TPOT limit. Decode
    // throughput B / T(B) never falls as B grows, so it is the largest batch
    // whose roofline step meets the limit (communication not counted).
    if (std::optional<uint32_t> Limit = field(W, "tpot_limit")) {
      const Dimension Data = G.Nodes[Weights].Dim;
      const Dimension PeakDim = G.Nodes[Peak].Dim;
      const Dimension BWDim = G.Nodes[BW].Dim;
      uint32_t PerSequenceFlops =
          B.apply(walls::DecodeStepFlopsF,
                  {ComputeParams, Layers, AttnDim,
                   B.constant(1, "one sequence"), Context, TP},
                  "decode.flops_per_sequence");
      uint32_t PerSequenceBytes = B.op(
          Op::Div, {B.op(Op::Mul, {Context, KV}, Data), TP}, Data);
      B.name(PerSequenceBytes, "decode.kv_bytes_per_sequence");
      B.apply(walls::MaxBatchUnderTPOTF,
              {*Limit, PerSequenceFlops, Weights, PerSequenceBytes,
               B.op(Op::Mul, {Peak, Eta}, PeakDim),
               B.op(Op::Mul, {BW, EtaMem}, BWDim), MaxSequences},
              "max_batch_under_tpot");
    }

    // With speculative decoding a target step verifies k draft tokens and
    // emits E = (1 - a^(k+1)) / (1 - a) of them on average; verifying k + 1
    // tokens is taken to cost one decode step (true while decode is
    // memory-bound).
    uint32_t TPOT = Step;
    if (Draft) {
      Roofline DraftMachine = Machine;
      DraftMachine.Layers = Draft->Layers;
      DraftMachine.Hidden = Draft->Hidden;
      uint32_t DraftStep = phase(
          "draft.decode", "draft.decode_step_time", DraftMachine, Batch,
          OneToken,
          B.apply(walls::DecodeStepFlopsF,
                  {Draft->Params, Draft->Layers, Draft->AttnDim, Batch,
                   Context, TP},
                  "draft.decode.flops"),
          B.apply(walls::DecodeStepBytesF,
                  {Draft->Weights, Draft->KV, Batch, Context, TP},
                  "draft.decode.bytes"));
      B.apply(walls::SpeculativeTokensPerStepF,
              {Draft->Acceptance, Draft->Tokens},
              "speculative.tokens_per_step");
      TPOT = B.apply(walls::SpeculativeTimePerTokenF,
                     {DraftStep, Step, Draft->Tokens, Draft->Acceptance},
                     "speculative.time_per_token");
    }
    B.apply(walls::DecodeThroughputF, {Batch, TPOT}, "throughput");

    // Wall 4: one request's service. Its prefill runs alone; each later
    // token takes a decode step of the full batch.
    // With a prefix cache only the missed part of the prompt is prefilled.
    uint32_t OneSequence = B.constant(1, "one sequence");
    uint32_t Computed = Prompt;
    if (std::optional<uint32_t> Hit = field(W, "prefix_hit_rate")) {
      checkFraction(W, "prefix_hit_rate");
      Computed = B.apply(walls::PrefillTokensComputedF, {Prompt, *Hit},
                         "request.prefill_tokens");
    }
    uint32_t RequestPrefill = phase(
        "request.prefill", "request.prefill_time", Machine, OneSequence,
        Computed,
        B.apply(walls::PrefillFlopsF,
                {ComputeParams, Layers, AttnDim, OneSequence, Computed, TP},
                "request.prefill.flops"),
        B.apply(walls::PrefillBytesF,
                {Weights, KV, OneSequence, Computed, TP},
                "request.prefill.bytes"));
    for (const char *Alias : {"tpot.p50", "tpot.p99", "itl.p50", "itl.p99"})
      B.name(TPOT, Alias);
    uint32_t Service = B.apply(walls::EndToEndLatencyF,
                               {RequestPrefill, TPOT, Output},
                               "request.service_time");
    // Every replica (tp x pp devices) serves `batch` requests at once: the
    // queue has replicas x batch servers.
    uint32_t Replicas = B.op(
        Op::Floor, {B.op(Op::Div, {*Devices, B.op(Op::Mul, {TP, PP}, One)},
                         One)},
        One);
    B.name(Replicas, "replicas");
    uint32_t Servers = B.op(Op::Mul, {Replicas, Batch}, One);
    B.name(Servers, "servers");

    // Wall 18 (part): nameplate power and energy per token at the decode
    // throughput of every replica.
    uint32_t Power = B.apply(walls::SystemPowerF,
                             {*Devices, TDP, *Nodes, *Overhead}, "power");
    uint32_t SystemThroughput =
        B.op(Op::Mul, {Replicas, G.Named.lookup("throughput")},
             unit("tok/s"));
    B.name(SystemThroughput, "system_throughput");
    B.apply(walls::EnergyPerTokenF, {Power, SystemThroughput},
            "energy_per_token");
    std::optional<uint32_t> Arrival = field(W, "arrival");
    if (!Arrival)
      return; // no load given: the percentiles stay unavailable

    // Wall 7: the M/G/c queue in front of the servers.
    uint32_t CV = orDefault(W, "service_cv", 1, One,
                            "default: exponential service times (M/M/c)",
                            /*Calibrated=*/true);
    B.apply(walls::UtilisationF, {*Arrival, Service, Servers}, "utilisation");
    uint32_t Stable = B.apply(walls::QueueIsStableF,
                              {*Arrival, Service, Servers}, "queue_stable");
    G.Nodes[Stable].IsBool = true;
    const std::pair<const Formula *, const char *> TTFT[] = {
        {&walls::TtftP50F, "ttft.p50"},
        {&walls::TtftP90F, "ttft.p90"},
        {&walls::TtftP99F, "ttft.p99"},
        {&walls::TtftP999F, "ttft.p999"}};
    for (const auto &[F, Name] : TTFT)
      B.apply(*F, {*Arrival, Service, Servers, CV, RequestPrefill}, Name);
    const std::pair<const Formula *, const char *> Latency[] = {
        {&walls::LatencyP50F, "latency.p50"},
        {&walls::LatencyP90F, "latency.p90"},
        {&walls::LatencyP99F, "latency.p99"},
        {&walls::LatencyP999F, "latency.p999"}};
    for (const auto &[F, Name] : Latency)
      B.apply(*F, {*Arrival, Service, Servers, CV}, Name);
  }

  /// CNN and encoder inference: each device runs whole batches of samples
  /// (data parallel); a batch reads the weights once and does B samples'
  /// FLOPs. Activation traffic is not counted yet.
  void perSample(const ir::Entity &W, const ir::Entity &Model,
                 const ir::Entity &Precision, const ir::Entity &Accel,
                 uint32_t Devices, uint32_t Nodes, uint32_t Overhead,
                 bool Convolutional) {
    const Dimension One;
    uint32_t Params = required(Model, "params", "weight bytes (wall 2)");
    uint32_t Bytes = required(Precision, "bytes", "bytes per parameter");
    uint32_t Peak = required(
        Accel, "peak." + Precision.Name,
        fmt::format("its dense {} peak; the workload runs in {}",
                    Precision.Name, Precision.Name));
    uint32_t BW = required(Accel, "hbm.bandwidth", "memory bandwidth");
    uint32_t Capacity = required(Accel, "hbm.capacity", "memory capacity");
    uint32_t TDP = required(Accel, "tdp", "power draw (wall 18)");
    uint32_t Batch = orDefault(W, "batch", 1, One, "default: one sample");
    uint32_t Eta = orDefault(W, "efficiency", 1, One,
                             "default: the ideal roofline (eta = 1)",
                             /*Calibrated=*/true);
    uint32_t EtaMem = orDefault(W, "memory_efficiency", 1, One,
                                "default: the full HBM bandwidth",
                                /*Calibrated=*/true);
    std::optional<uint32_t> PerSample;
    if (Convolutional) {
      PerSample = required(Model, "flops_per_sample",
                           "the forward FLOPs of one sample");
    } else {
      const char *Why = "the encoder's attention FLOPs";
      uint32_t Layers = required(Model, "layers", Why);
      uint32_t Heads = required(Model, "heads", Why);
      uint32_t HeadDim = required(Model, "head_dim", Why);
      uint32_t Seq = required(W, "seq", "tokens per encoder sample");
      if (!Failed)
        PerSample = B.apply(walls::EncoderFlopsPerSampleF,
                            {Params, Layers,
                             B.op(Op::Mul, {Heads, HeadDim}, One), Seq},
                            "flops_per_sample");
    }
    if (Failed || !PerSample)
      return;
    B.name(Batch, "batch");
    uint32_t Unit = B.constant(1, "one device per replica");
    uint32_t Weights = B.apply(walls::WeightBytesF,
                               {Params, Bytes, Unit, Unit},
                               "weights_per_device");
    B.name(Weights, "memory_per_device");
    B.name(Capacity, "device_memory");
    uint32_t Fits = B.op(Op::Le, {Weights, Capacity}, One, true);
    B.name(Fits, "memory_fits");
    B.name(Fits, "feasible");
    uint32_t Flops = B.op(Op::Mul, {*PerSample, Batch},
                          G.Nodes[*PerSample].Dim);
    B.name(Flops, "batch.flops");
    uint32_t Compute = B.apply(walls::ComputeTimeF, {Flops, Peak, Eta},
                               "batch.compute_time");
    uint32_t Memory = B.apply(walls::MemoryTimeF, {Weights, BW, EtaMem},
                              "batch.memory_time");
    B.apply(walls::IntensityF, {Flops, Weights}, "batch.intensity");
    B.apply(walls::RidgePointF, {Peak, BW}, "ridge_point");
    uint32_t Step = B.apply(walls::RooflineTimeF, {Compute, Memory},
                            "batch_time");
    uint32_t PerDevice = B.apply(walls::SampleThroughputF, {Batch, Step},
                                 "sample_throughput");
    uint32_t System = B.op(Op::Mul, {PerDevice, Devices},
                           G.Nodes[PerDevice].Dim);
    B.name(System, "system_sample_throughput");
    B.apply(walls::SystemPowerF, {Devices, TDP, Nodes, Overhead}, "power");
  }

  struct DraftModel {
    uint32_t Params, Layers, AttnDim, Hidden, Weights, KV, Tokens, Acceptance;
  };

  /// The draft model of `speculative { draft = ...; tokens = k;
  /// acceptance = a }`, or nullopt when the workload has none.
  std::optional<DraftModel> draftModel(const ir::Entity &W, uint32_t TP,
                                       uint32_t PP, uint32_t Bytes,
                                       uint32_t KVBytes) {
    const ir::Entity *M = entity(W, "speculative.draft");
    if (!M)
      return std::nullopt;
    const Dimension One;
    const char *Why = "the draft model's decode step (speculative decoding)";
    DraftModel D;
    D.Params = required(*M, "params", Why);
    D.Layers = required(*M, "layers", Why);
    uint32_t Heads = required(*M, "heads", Why);
    std::optional<uint32_t> HeadDim = field(*M, "head_dim");
    std::optional<uint32_t> Hidden = field(*M, "hidden");
    if (!HeadDim) {
      uint32_t H = Hidden ? *Hidden : required(*M, "hidden", Why);
      HeadDim = B.op(Op::Div, {H, Heads}, One);
    }
    std::optional<uint32_t> KVHeads = field(*M, "kv_heads");
    D.AttnDim = B.op(Op::Mul, {Heads, *HeadDim}, One);
    D.Hidden = Hidden ? *Hidden : D.AttnDim;
    D.Tokens = required(W, "speculative.tokens", "draft tokens per step (k)");
    D.Acceptance = required(W, "speculative.acceptance",
                            "the draft tokens' acceptance rate");
    checkFraction(W, "speculative.acceptance");
    if (Failed)
      return std::nullopt;
    D.Weights = B.apply(walls::WeightBytesF, {D.Params, Bytes, TP, PP},
                        "draft.weights_per_device");
    D.KV = B.apply(walls::KVBytesPerTokenF,
                   {D.Layers, KVHeads ? *KVHeads : Heads, *HeadDim, KVBytes},
                   "draft.kv_bytes_per_token");
    return D;
  }

  /// A fraction must lie in [0, 1]; the check uses the folded value, so a
  /// later change of the leaf (a sweep) is the caller's to bound.
  void checkFraction(const ir::Entity &E, llvm::StringRef Path) {
    const ir::Field *F = E.field(Path);
    if (!F || !F->Folded)
      return;
    double V = F->Folded->Number;
    if (V >= 0 && V <= 1)
      return;
    C.Diags.report(DiagKind::DomainError, F->Value->Range,
                   fmt::format("`{}` is a fraction between 0 and 1, got {}",
                               Path.str(), V));
    Failed = true;
  }

  /// The machine a phase runs on: the roofline, and the fabric of its
  /// tensor-parallel all-reduces (none for a bare accelerator).
  struct Roofline {
    uint32_t Peak, Eta, BW, EtaMem;
    std::optional<uint32_t> FabricBW, FabricLatency;
    uint32_t EtaComm, Layers, Hidden, ActivationBytes, TP;
  };

  /// A phase: `<Phase>.compute_time`, `.memory_time`, `.intensity`,
  /// `.roofline_time`, `.comm_time` (two all-reduces of the hidden state of
  /// \p Sequences x \p Tokens per layer), and the step time \p TimeName.
  uint32_t phase(const std::string &Phase, const std::string &TimeName,
                 const Roofline &M, uint32_t Sequences, uint32_t Tokens,
                 uint32_t Flops, uint32_t Bytes) {
    uint32_t Compute = B.apply(walls::ComputeTimeF, {Flops, M.Peak, M.Eta},
                               Phase + ".compute_time");
    uint32_t Memory = B.apply(walls::MemoryTimeF, {Bytes, M.BW, M.EtaMem},
                              Phase + ".memory_time");
    B.apply(walls::IntensityF, {Flops, Bytes}, Phase + ".intensity");
    uint32_t Roof = B.apply(walls::RooflineTimeF, {Compute, Memory},
                            Phase + ".roofline_time");
    const Dimension Second = unit("s");
    uint32_t Comm;
    if (M.FabricBW) {
      uint32_t Message = B.apply(
          walls::TensorParallelMessageF,
          {Sequences, Tokens, M.Hidden, M.ActivationBytes},
          Phase + ".tp_message");
      uint32_t Layer = B.apply(
          walls::TensorParallelLayerTimeF,
          {Message, M.TP, *M.FabricBW, M.EtaComm, *M.FabricLatency},
          Phase + ".tp_layer_time");
      Comm = B.op(Op::Mul, {M.Layers, Layer}, Second);
    } else {
      LeafOrigin None;
      None.Spelling = "0 s";
      None.Notes.push_back("no intra-node fabric: no tensor-parallel "
                           "communication is modelled");
      Comm = B.leaf(0, Second, std::move(None));
    }
    B.name(Comm, Phase + ".comm_time");
    return B.apply(walls::StepTimeF, {Roof, Comm}, TimeName);
  }

  /// A field's folded number, or 1 when it is not a constant.
  double foldedNumber(const ir::Entity &E, llvm::StringRef Path) {
    const ir::Field *F = E.field(Path);
    return F && F->Folded ? F->Folded->Number : 1;
  }

  /// Metrics that no implemented wall computes for this kind of workload
  /// are listed as unavailable; those that do not apply to it (per-sample
  /// throughput for an LLM, token latencies for a CNN) are left out.
  void finishMetrics() {
    static const char *const PerSampleOnly[] = {"batch_time",
                                                "sample_throughput"};
    static const char *const TokenOnly[] = {
        "ttft.", "tpot.", "itl.", "latency.", "utilisation", "prefill_time",
        "decode_step_time", "throughput", "max_concurrent_sequences",
        "energy_per_token", "cost_per_mtok"};
    bool PerSample = G.find("sample_throughput") >= 0;
    for (const MetricSchema &M : S.Schema->Metrics) {
      llvm::StringRef Path(M.Path);
      auto inList = [&](llvm::ArrayRef<const char *> List) {
        return llvm::any_of(List, [&](const char *P) {
          return llvm::StringRef(P).endswith(".") ? Path.startswith(P)
                                                  : Path == P;
        });
      };
      if (G.find(M.Path) >= 0)
        G.Metrics.push_back(M.Path);
      else if (!inList(PerSample ? llvm::makeArrayRef(TokenOnly)
                                 : llvm::makeArrayRef(PerSampleOnly)))
        G.Unavailable.push_back(M.Path);
    }
  }
};

/// Scenarios whose metrics an expression reads.
void scenariosOf(const ir::Expr &E, std::set<const ir::Entity *> &Out) {
  if (E.Kind == ir::ExprKind::MetricRef)
    Out.insert(E.Target);
  if (E.Kind == ir::ExprKind::LetRef && E.LetTarget->Value)
    scenariosOf(*E.LetTarget->Value, Out);
  for (const ir::ExprPtr &O : E.Operands)
    scenariosOf(*O, Out);
}

} // namespace

bool runLowerToGraph(Compilation &C) {
  if (C.Diags.hasErrors())
    return false; // lowering assumes a well-typed program
  std::vector<const ir::Entity *> Scenarios;
  for (const auto &E : C.Program.Entities)
    if (E->Kind == "scenario" && C.SM.FindBufferContainingLoc(
                                     E->NameRange.Start) ==
                                     C.Program.MainBufferId)
      Scenarios.push_back(E.get());
  C.Graphs.resize(Scenarios.size());
  std::vector<std::unique_ptr<ScenarioLowering>> Lowerings;
  for (size_t I = 0; I < Scenarios.size(); ++I) {
    Lowerings.push_back(
        std::make_unique<ScenarioLowering>(C, *Scenarios[I], C.Graphs[I]));
    Lowerings.back()->run();
    if (const ir::Field *Sla = Scenarios[I]->field("sla"))
      for (const ir::ExprPtr &Cond : Sla->Conditions)
        Lowerings.back()->condition(*Cond, Cond->Range, false, "");
  }
  for (const ir::Assert &A : C.Program.Asserts) {
    if (A.Folded)
      continue; // constant: decided at compile time
    std::set<const ir::Entity *> Used;
    scenariosOf(*A.Condition, Used);
    if (Used.size() > 1) {
      std::vector<std::string> Names;
      for (const ir::Entity *E : Used)
        Names.push_back("`" + E->Name + "`");
      std::sort(Names.begin(), Names.end());
      C.Diags.report(DiagKind::AssertSpansScenarios, A.Range,
                     fmt::format("assert reads the metrics of {}; write one "
                                 "assert per scenario",
                                 llvm::join(Names, " and ")));
      continue;
    }
    auto It = Used.empty() ? Scenarios.end()
                           : std::find(Scenarios.begin(), Scenarios.end(),
                                       *Used.begin());
    if (It == Scenarios.end())
      continue; // a scenario of an imported module is not evaluated
    Lowerings[It - Scenarios.begin()]->condition(*A.Condition, A.Range, true,
                                                  A.Message);
  }
  return !C.Diags.hasErrors();
}

} // namespace mlsc
