//===- Context.h - What lowering steps share -----------------------*- C++
//-*-===//
//
// Lowering a scenario runs a table of steps (Steps.def) over one
// LoweringContext: the scenario, its workload, model and system, the graph
// being built, and the state a workload family's steps hand on to each
// other (DecoderState, PerSampleState). The context turns IR fields into
// leaves with their origins, falls back on documented defaults, reports
// missing and out-of-domain inputs, and lowers IR expressions (conditions,
// lets, queries) over the graph's metrics.
//
//===----------------------------------------------------------------------===//
#ifndef MLSC_PASSES_LOWERING_CONTEXT_H
#define MLSC_PASSES_LOWERING_CONTEXT_H

#include "passes/Pipeline.h"
#include "passes/lowering/GraphBuilder.h"
#include "runtime/Defaults.h"

#include <array>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace mlsc {

using graph::NodeId;

/// Which steps lower a workload (Steps.def).
enum class WorkloadFamily : uint8_t {
  /// A dense or MoE decoder LLM served (inference).
  DecoderInference,
  /// A dense or MoE decoder LLM trained: its walls are not lowered yet.
  DecoderTraining,
  /// CNN and encoder models, inference or training: batches of samples.
  PerSample,
};

/// The system a workload runs on: an accelerator, a node of them, or a
/// cluster of nodes.
struct System {
  const ir::Entity *Accel = nullptr;
  const ir::Entity *Node = nullptr; ///< owns the fabrics; null when bare
  NodeId Devices, Nodes, Overhead;
  /// Accelerators per node (the scale-up domain); none for a bare device.
  std::optional<NodeId> NodeDevices;
  NodeId TDP; ///< read by the family's input step
};

/// Expert parallelism's routing as the all-to-all sees it (wall 14): the
/// model's expert groups and the groups a token may use (0 and 0: no
/// group-limited routing), and the dispatch's bytes over the activations'.
struct ExpertRouting {
  NodeId Groups, GroupsPerToken, DispatchRatio;
};

/// The machine a phase runs on: the roofline, the fabric of its
/// tensor-parallel all-reduces (none for a bare accelerator), and the
/// kernel-class efficiencies of wall 3.
struct Roofline {
  NodeId Peak, EtaGemm, EtaAttention, BW, EtaMem;
  /// The node's fabric (scale-up) and, for collectives and pipeline sends
  /// that leave the node, the scale-out fabric (the node's `inter`, else
  /// the node's own fabric when nothing spans nodes); NodeRanks devices to
  /// a node.
  std::optional<NodeId> FabricBW, FabricLatency;
  NodeId InterBW, InterLatency, NodeRanks;
  NodeId EtaComm, Layers, Hidden, ActivationBytes, TP;
  /// An all-reduce call's fixed cost (overhead.collective), with the fabric.
  NodeId CollectiveOverhead;
  /// Pipeline stages a token crosses in sequence; none outside decoders.
  std::optional<NodeId> PP;
  /// Expert parallelism (an MoE decoder): the all-to-alls of its MoE
  /// layers, among the replica's tp x pp x ep devices.
  std::optional<NodeId> EP;
  NodeId TopK, MoeLayers, ReplicaDevices;
  /// The busiest expert-parallel rank's routed tokens over the mean's.
  std::optional<NodeId> MoeImbalance;
  /// Group-limited routing and the dispatch's precision (MoE only).
  std::optional<ExpertRouting> Routing;
  /// What an all-to-all gets across nodes: the scale-out bandwidth, at
  /// most a device's share of the bisection, and the far latency (wall 10).
  std::optional<NodeId> AllToAllBW, AllToAllLatency;
  /// Wall 3: a decoder step's fixed costs, per step and per layer.
  std::optional<NodeId> StepOverhead, LayerOverhead;
  /// Wall 3: the share of a decoder step's GEMM arithmetic and weight
  /// reads that overlap (kernel_class_roofline_time); 1 outside decoders.
  std::optional<NodeId> Overlap;
  /// Wall 6: weights stream in at this bandwidth, layer by layer.
  std::optional<NodeId> InjectBW;
  NodeId Params, WeightBytes;
};

/// A phase's times, for a caller that models its step as a function of
/// the batch: Step = max(Compute, Memory) + Added, where Compute includes
/// weight streaming (wall 6) and Added the communication.
struct PhaseTimes {
  NodeId Step, Compute, Memory, Added, Efficiency;
  /// The communication among Added (Added also holds the fixed overheads).
  NodeId Comm;
  /// A decoder phase's kernel classes (kernel_class_roofline_time): the
  /// GEMMs' compute and weight reads, attention's compute and KV traffic.
  /// Invalid for a phase with one roofline.
  NodeId GemmCompute, WeightRead, AttentionCompute, KVTraffic;
  /// A decode phase's tokens a step (its micro-batch's sequences).
  NodeId Tokens;
  /// Under weight streaming (wall 6): the streaming time, and the GEMMs'
  /// compute before GemmCompute waits for it. Invalid otherwise.
  NodeId Streaming, GemmAlone;
};

/// A speculative-decoding draft model.
struct DraftModel {
  NodeId Params, Layers, AttnDim, Hidden, Weights, KV, KVShards, Tokens,
      Acceptance;
};

/// An MoE model's routing: total and active parameters, experts, top_k.
struct MoeShape {
  NodeId Params, Active, Experts, TopK;
};

/// Serving under expert parallelism (ep > 1): attention and the dense
/// layers run data-parallel over the replica's ep groups (each a tp x pp
/// group holding its own sequences and their KV cache), the routed experts
/// split over all of them (SGLang's data-parallel attention with EP,
/// DeepSeek-V3's serving). A step's busiest group carries max(B / ep,
/// min(B, 1)) of its B sequences; each rank computes its share B / ep of
/// the routed experts' tokens, imbalance times the mean.
struct ExpertGroups {
  NodeId EP;
  /// The parameters every token computes (attention, dense layers, shared
  /// experts) and the routed experts' active ones, times the imbalance.
  NodeId AlwaysActive, Routed;
};

/// What a decoder's steps share.
struct DecoderState {
  Roofline Machine;
  NodeId Params, ComputeParams, Layers, Heads, AttnDim, HeadDim;
  /// The attention width of a decode step: AttnDim, except under
  /// multi-head latent attention, whose decode attends over the latent.
  NodeId DecodeAttnDim;
  /// Bytes of an activation (16 bits under narrow math), a stored weight
  /// and a KV-cache element.
  NodeId ActBytes, WeightBytes, KVBytes, Peak, BW, Capacity;
  NodeId Batch, Prompt, Output, TP, PP, OneToken, Context;
  /// Expert parallelism (MoE only; 1 otherwise) and the devices of one
  /// replica, tp * pp * ep.
  NodeId EP, ReplicaDevices;
  NodeId Weights, KV, Sequence, MaxSequences;
  /// The ways a tensor-parallel group splits the KV cache: min(tp,
  /// kv_heads) (past kv_heads each rank holds one head, replicated), 1 for
  /// a latent (MLA) cache, which every rank keeps whole.
  NodeId KVShards;
  /// The ways one group of a replica splits a sequence's KV cache in
  /// memory: KVShards x pp, each pipeline stage holding its own layers'
  /// (what a KV transfer sends a device; a step, which crosses every stage,
  /// reads KVShards' share).
  NodeId KVGroupShards;
  /// The ways a replica's devices split its sequences' KV cache: the
  /// group's, times ep when the ep groups hold sequences of their own
  /// (what memory and the simulator's cache count, at the mean group).
  NodeId KVStoreShards;
  /// The memory step's parts the batching step reads: a sequence's paged
  /// KV cache, the weights and activations, the runtime's reserve.
  NodeId KVPerSequence, FixedMemory, Reserve;
  /// The longest request the engine must admit: prompt + output, or
  /// prompt + max_output where the workload caps the output.
  NodeId Longest;
  std::optional<NodeId> FFN;
  std::optional<DraftModel> Draft;
  /// Under speculative decoding and a load, a token's time with the slots
  /// full (draft steps and the target's verifying step; the capacity's).
  std::optional<NodeId> SpeculativeAtSlots;
  /// Under speculative decoding, an iteration: the draft's k steps and the
  /// target's verifying step (what a new request waits out).
  std::optional<NodeId> SpeculativeIteration;
  /// The iteration a replica runs, which a new request waits out and
  /// prompt chunks ride on: the decode step, or the speculative one.
  NodeId iteration() const {
    return SpeculativeIteration ? *SpeculativeIteration : DecodeStep;
  }
  std::optional<MoeShape> Moe;
  /// Expert parallelism: the busiest rank's routed tokens over the mean's.
  std::optional<NodeId> MoeImbalance;
  /// Expert parallelism: the groups that split the batch.
  std::optional<ExpertGroups> Groups;
  /// The ways a batch's FLOPs and KV cache are split across devices at B
  /// >= ep: tp and KVShards, times ep under expert parallelism.
  NodeId WorkShards, KVWorkShards;
  bool Static = false;
  /// The engine reserves a request's KV cache to completion when admitting
  /// it (kv_allocation = to_completion: TensorRT-LLM's default).
  bool ReserveToCompletion = false;
  bool Fused = true;                ///< fused attention (FlashAttention)
  std::optional<NodeId> GemmFactor; ///< pruning: GEMM time factor
  std::optional<NodeId> Chunk;
  NodeId PrefillTime, DecodeStep, TPOT;
  /// Continuous batching under an arrival rate: the decode batch follows
  /// the load (wall 5), solved from the decode step at one sequence and at
  /// the slot limit; the decode phase is then lowered at that batch.
  bool Loaded = false;
  PhaseTimes DecodeAtOne, DecodeAtSlots;
  /// The prefill phase's parts (for static batching, the slots' batch).
  PhaseTimes PrefillParts;
  /// Static batching under an arrival rate (wall 5): a replica takes what
  /// waits when it empties, so its batch follows the load; the batch, its
  /// prefill, decode step and time from admission to its longest output's
  /// end, and the arrival rate a replica.
  struct StaticLoad {
    /// A batcher's arrival rate, batch and slots: the replica's, or under
    /// pipeline parallelism one of its min(pp, batch) engines'.
    NodeId Rate, Batch, Slots;
    NodeId Prefill, Step, Cycle, Longest;
    /// The outputs' spread and cap (0 when not given).
    NodeId CV, Cap;
    /// static_batch_at_load's arguments, the replica's arrival rate at
    /// AtLoadRate.
    std::vector<NodeId> AtLoadArgs;
    static constexpr size_t AtLoadRate = 22;
  };
  std::optional<StaticLoad> StaticAtLoad;
  /// Static batching: a replica's engines (min(pp, batch); 1 without pp),
  /// each engine's slots (batch / engines), and the outputs' spread and
  /// cap (0 when not given) that its batches' longest outputs read.
  struct StaticEngine {
    NodeId Count, Slots, CV, Cap;
  };
  std::optional<StaticEngine> StaticEngines;
  /// The decode phase (at the running batch under load, else the slots')
  /// and the capacity's step (at the slots).
  PhaseTimes Decode, CapacityPhase;
  /// The decode phase's blended efficiency (the same at any batch).
  NodeId DecodeEta;
  /// The decode step and time per token at the slot limit, `batch`
  /// sequences: a replica's capacity (its throughput).
  NodeId CapacityStep, CapacityTPOT;
  /// The prompt tokens a request's prefill computes (a prefix cache's hits
  /// skipped) and that prefill run alone, before any chunking.
  NodeId Computed, RequestPrefill;
  /// What that prefill spends beyond its GEMMs, in proportion to the
  /// tokens it carries: its attention (the kernel class's time) and its
  /// communication (tensor-parallel all-reduces, pipeline sends, expert
  /// all-to-alls). A prompt's chunks carry it share by share. Lowered only
  /// with `prefill_chunk` and continuous batching.
  NodeId ChunkCarried;
  /// The latencies of that prefill's collectives, which the iterations'
  /// own collectives pay (lowered with `prefill_chunk` only).
  NodeId PrefillCommLatency;
  /// A request's share of a prefill pass batched up to the token budget:
  /// the replica time its prefill takes under load (unchunked).
  NodeId PrefillShare;
  /// A dispatcher's batches (`batcher.window`, under an arrival rate),
  /// read once by lowerRunningBatch: the window, the bound (0: none) and
  /// the requests' rate that fills the batches (none in a closed loop,
  /// which only the simulator plays).
  struct BatcherInputs {
    NodeId Window, MaxRequests;
    std::optional<NodeId> Rate;
  };
  std::optional<BatcherInputs> Batcher;
  /// Under continuous batching: the mean requests a batch holds, the
  /// sequences they bring (times
  /// `reasoning.samples`), and (unchunked) a request's first token from
  /// the batch's arrival at its replica: the passes that prefill the
  /// batch's prompts, up to its own.
  std::optional<NodeId> BatcherRequests, BatcherSequences, BatcherFirstToken;
  /// Unchunked: the time the batch's passes hold the replica, back to
  /// back (a request's own prefill for a batch of one).
  std::optional<NodeId> BatcherBusy;
  /// The micro-batches prefilling at once, m = min(pp, batch) (1 without
  /// pipeline parallelism): a prompt holds each stage for 1 / m of its
  /// prefill, the capacity's share.
  NodeId Stages;
  /// What another request's unchunked prefill stalls a running sequence
  /// by (lowered under load, colocated): its whole share, less the decode
  /// step its iteration replaces under pipeline parallelism, at least the
  /// stage's share.
  std::optional<NodeId> PrefillStall;
  /// The weight bytes a decode step reads (a tensor-parallel rank's share
  /// of every pipeline stage), and the sequences it runs: one micro-batch,
  /// batch / min(pp, batch).
  NodeId DecodeWeights, MicroBatch;
  /// The sequences the published decode step runs (the running batch
  /// under load, the slots otherwise).
  NodeId DecodeBatch;
  /// A request's time in its slot and to its first token, the system's
  /// replicas and slots, and the arrival rate when the workload gives one.
  NodeId Service, FirstToken, Servers, Replicas;
  /// A request's mean time per output token in its slot (other requests'
  /// prefills included).
  NodeId MeanTPOT;
  /// Other requests' prefills that land in a request's decode (a Poisson
  /// count): their rate and what each adds (request_tpot_quantile's). Set
  /// by the serving step under load, colocated.
  std::optional<NodeId> StallRate, StallExtra;
  /// The rate of the prompts that join a stall in progress (its busy
  /// period): the stalls' own, 1 / m of it under pipeline parallelism, or
  /// 0 behind a batcher.
  std::optional<NodeId> StallChain;
  /// The share of a running request's time the arrivals' prefills would
  /// stall, its mean time per token and its service, were they all
  /// admitted (above capacity the slots admit at the capacity's rate):
  /// what sizing rescales to other replica counts.
  std::optional<NodeId> OfferedStallShare, OfferedService;
  /// Chunked prefill under load: what one other request's prompt adds to
  /// the iterations its chunks ride on (chunk_extra_time). Set only where
  /// chunks ride on decode iterations.
  std::optional<NodeId> ChunkExtra;
  /// Chunked prefill whose chunks ride on decode iterations: `prefill_chunk`
  /// on a colocated replica batching continuously (not a static batch, not
  /// a disaggregated platform, whose prefills run whole). Set by the
  /// serving step; the simulator plays the same replicas.
  bool ChunksRide = false;
  /// Prefill/decode disaggregation: a prompt's KV-cache transfer, its
  /// bytes per token a TP shard moves, the rate and the fixed latency
  /// (kv_transfer_time), for a prompt of another length (wall 7).
  std::optional<NodeId> TransferShard, TransferRate, TransferLatency;
  /// Prefill/decode disaggregation with sized pools: the prefill pool's
  /// replicas (Replicas is then the decode pool's).
  std::optional<NodeId> PrefillReplicas;
  std::optional<NodeId> Arrival;
  /// Sequences arriving: the workload's arrival x its reasoning samples
  /// (wall 12), when it gives an arrival rate.
  std::optional<NodeId> SeqArrival;
  /// Wall 12: the samples per answer and the thinking tokens each decodes
  /// before its `output` (none when the workload does not reason).
  std::optional<NodeId> Samples, Thinking;
  /// The most tokens a sequence decodes: `max_output`, the answer's cap,
  /// plus the thinking tokens before it (none without `max_output`).
  std::optional<NodeId> OutputCap;
  /// The mean the output lengths are drawn about (lognormal, `output_cv`)
  /// before `max_output` cuts them; Output is the cut draws' mean when
  /// both are given, this otherwise (so Output != OutputDrawn says the
  /// draws are cut; lowerDecoderInputs alone decides it).
  NodeId OutputDrawn;
  /// With `output_cv` and `max_output`: the cut draws' coefficient of
  /// variation (the queue's service spread and the slots' length bias).
  std::optional<NodeId> OutputCappedCV;
  /// With `output_cv` under continuous batching: the length the draws are
  /// cut at (OutputCap, else the room the model's context leaves the mean
  /// prompt; none when neither is known).
  std::optional<NodeId> OutputLimit;
  /// With `output_cv` under continuous batching: the output of the
  /// sequence holding a slot, averaged over the slots' time, E[N^2] / E[N]
  /// (length-biased; lowerDecoderInputs).
  std::optional<NodeId> SlotOutput;
  /// The rate of the other requests' prefills at a replica, lambda /
  /// replicas x (B - 1)/B, when a colocated replica batches continuously
  /// under an arrival rate: they interfere with its decode (wall 4) and
  /// queue ahead of a request's own prefill (wall 7).
  std::optional<NodeId> OtherPrefills;
};

/// What the steps of a CNN or encoder model share.
struct PerSampleState {
  bool Training = false;
  NodeId Params, Bytes, Peak, BW, Capacity, Batch, EtaMem;
  NodeId Forward;    ///< forward FLOPs of one sample
  NodeId Efficiency; ///< wall 3: conv, or GEMM and attention blended
  std::optional<NodeId> Activations, Optimizer;
  NodeId Weights, Moved; ///< bytes stored and moved per step
};

/// What the steps of a decoder's training share (passes/lowering/
/// Training*.cpp).
struct TrainingState {
  NodeId Layers, Hidden, Heads, KVHeads, AttnDim, KVDim, FFN, FFNMatrices,
      Vocab;
  NodeId Seq, LayerParams, StageParams;
  /// A layer's weights as the step's GEMMs run them (an MoE layer's busiest
  /// expert-parallel rank: moe_imbalance x its routed share) and as a
  /// device stores them (routed experts over ep), averaged over the
  /// layers; the routed experts' stored share alone; the feed-forward
  /// width the activations and the non-GEMM traffic see. For a dense model
  /// the first two are LayerParams and the width is `ffn`.
  NodeId TimeLayerParams, StoredLayerParams, ExpertLayerParams, FFNWidth;
  /// Mixture of experts: expert parallelism, top_k, the routed tokens'
  /// imbalance, the share of MoE layers.
  bool Moe = false;
  NodeId EP, TopK, Imbalance, MoeShare;
  /// Group-limited routing and the dispatch's precision (wall 14).
  ExpertRouting Routing;
  /// The parameters of the device holding most, shared (synced over dp x
  /// cp) and routed experts' (over dp x cp / ep, the expert group).
  NodeId SharedStage, ExpertGroup;
  std::optional<NodeId> ExpertStage;
  /// The layers of the first, a middle and the last pipeline stage (all
  /// layers / pp unless the workload sizes the first and last).
  NodeId FirstLayers, MiddleLayers, LastLayers;
  NodeId TP, PP, DP, CP, VP, Devices, MicroBatch, GlobalBatch, Microbatches;
  /// The interleaved schedule's micro-batches a chunk runs in a row (pp
  /// unless the workload gives `parallel.vp_group`).
  NodeId VPGroup;
  /// Tokens one device's micro-batch holds (seq / cp) and the sequence the
  /// attention spans (seq).
  NodeId LocalSeq;
  NodeId Peak, BW, Capacity, EtaGemm, EtaAttention, EtaMem, EtaComm;
  /// An all-reduce call's fixed cost (overhead.collective).
  NodeId CollectiveOverhead;
  /// The peak the GEMMs and attention get: Peak less the share of compute
  /// units communication kernels keep (overlap.sm_share).
  NodeId ComputePeak;
  NodeId ActBytes, WeightBytes, GradBytes, OptBytes, Zero;
  /// Choices: sequence parallelism and recomputation (0 none, 1
  /// selective, 2 full) are leaves a sweep varies; fused attention, tied
  /// embeddings and dropout are folded.
  NodeId SP, Recompute, Fused, Tied, Dropout;
  bool FusedAttention = true;
  /// 1 with full recomputation (each layer's forward runs again in the
  /// backward), else 0.
  NodeId FullRecompute;
  /// DP-SGD (wall 20): 0 none, 1 naive, 2 ghost, 3 book-keeping.
  NodeId DpSgd;
  /// 8-bit math: the GEMMs' operands are cast from 16 bits.
  bool Fp8 = false;
  /// The fabrics: the node's (scale-up) and the scale-out one, NodeRanks
  /// devices to a node; absent on a bare accelerator.
  bool HasFabric = false;
  /// The devices the layout uses at the workload's folded degrees.
  double FoldedDevices = 1;
  NodeId IntraBW, IntraLatency, InterBW, InterLatency, NodeRanks;
  /// What an expert all-to-all gets across nodes (MoE only; wall 10).
  NodeId AllToAllBW, AllToAllLatency;
};

/// Where a field of an entity stands in a graph (LoweringContext::leafFor).
enum class LeafStatus { Leaf, Derived, Unread };

class LoweringContext {
public:
  LoweringContext(Compilation &C, const ir::Entity &Scenario, graph::Graph &G);

  Compilation &C;
  const ir::Entity &Scenario;
  graph::Graph &G;
  GraphBuilder B;

  /// The scenario's workload, its model and precision, and its system;
  /// null (or nullopt) when the IR lacks them.
  const ir::Entity *Workload = nullptr, *Model = nullptr, *Precision = nullptr,
                   *SystemEntity = nullptr;
  std::optional<System> Sys;
  /// Wall 10: the bisection bandwidth a device's traffic across the
  /// cluster's halves gets (the bisection per node over its devices); an
  /// all-to-all that leaves the node runs at most this fast.
  std::optional<NodeId> BisectionPerDevice;
  /// Wall 10's tiers, for wall 14: a fat tree's pod size and
  /// oversubscription, and the latency of a path across the network's
  /// diameter (an all-to-all's peers, a step between pods). None outside a
  /// cluster with a scale-out fabric.
  struct Tiers {
    NodeId PodNodes, Oversubscription, FarLatency;
  };
  std::optional<Tiers> Network;
  WorkloadFamily Family = WorkloadFamily::DecoderInference;
  /// An input is missing or out of its domain: later steps stop.
  bool Failed = false;

  DecoderState Decoder;
  PerSampleState PerSample;
  TrainingState Training;

  // ---- Leaves.
  /// The node of a field: its literal as a leaf, or its expression lowered.
  std::optional<NodeId> field(const ir::Entity &E, llvm::StringRef Path);
  /// A field the lowering cannot do without; a missing one is reported with
  /// \p Why and replaced by a placeholder.
  /// Whether \p Accel's schema has a peak in \p Precision, the math
  /// precision workload \p W runs in; reports at W's `precision` (with the
  /// precisions that have peaks, and how to store in a block-scaled
  /// format) and marks the lowering failed when not.
  bool checkPeakPrecision(const ir::Entity &W, const ir::Entity &Precision,
                          const ir::Entity &Accel);
  NodeId required(const ir::Entity &E, llvm::StringRef Path,
                  llvm::StringRef Why);
  /// A field, or its documented default (runtime/Defaults.def: a leaf
  /// marked assumed, with the default's note) when the entity does not
  /// give it. The default's dimension is the field's (ir/Schema.def).
  NodeId orDefault(const ir::Entity &E, DefaultId D);
  /// A choice the graph reads as a number, so that a sweep can vary it: a
  /// flag (0 or 1) or an enumeration field's position among its symbols,
  /// \p Default when \p E does not write it. \p Why says what the value
  /// means.
  NodeId choice(const ir::Entity &E, llvm::StringRef Path, double Default,
                const char *Why);
  /// A constant leaf of \p SI base units in \p Unit ("tok"), spelled as
  /// written in \p Spelling, with why it has that value.
  NodeId quantity(double SI, const char *Unit, const char *Spelling,
                  const char *Why);
  /// A zero leaf in \p Unit with a note: "no ... is modelled".
  NodeId none(const char *Unit, const char *Spelling, const char *Why);
  /// Wall 3: the efficiency of a kernel class, or the workload's one
  /// `efficiency` for all of them.
  NodeId kernelEfficiency(const ir::Entity &W, DefaultId Class);
  /// Wall 2: the share of the memory bandwidth reached: the workload's
  /// `memory_efficiency`, else the accelerator's `hbm.efficiency`, else
  /// the default.
  NodeId memoryEfficiency(const ir::Entity &W, const ir::Entity *Accel);
  /// An MoE model names its experts and its top_k together (and `family
  /// = moe` needs both): one without the other, or the family without
  /// them, is an error, not a dense model. False (reported) when not.
  bool checkExpertFields(const ir::Entity &Model);
  /// `parallel.ep` shards experts: on a model \p Moe says has none it is an
  /// error. False (reported) when so.
  bool checkExpertParallel(const ir::Entity &W, const ir::Entity &Model,
                           bool Moe);
  /// Every expert-parallel rank holds the same number of experts: ep
  /// (node \p EP) must divide \p Model's experts (node \p Experts), an
  /// InvalidLayout error at `parallel.ep` when it does not, and a domain
  /// check for a sweep or solve that moves either. False (reported) when
  /// it does not.
  bool checkExpertsSplit(const ir::Entity &W, const ir::Entity &Model,
                         NodeId Experts, NodeId EP);
  /// Bytes an element of \p Precision takes in memory: its `bytes`, plus
  /// the share of its block scales (`scale_bits` over `scale_group`) for
  /// a block-scaled format (MXFP4, NVFP4, group-wise int4). The two scale
  /// fields go together; one alone is an error.
  NodeId storageBytes(const ir::Entity &Precision, llvm::StringRef Why);
  /// Math in 8 bits or fewer (fp8, int8, fp4): its own GEMM efficiency,
  /// attention in 16 bits, the serving factor.
  bool narrowMath(const ir::Entity &Precision);
  /// Wall 3: the GEMMs' efficiency, `kernels.gemm`, or `kernels.gemm_8bit`
  /// for 8-bit math and `kernels.gemm_4bit` for 4 bits or fewer.
  NodeId gemmEfficiency(const ir::Entity &W, const ir::Entity &Precision);
  /// Wall 3: attention's efficiency \p Eta against the math precision's
  /// \p Peak, when attention computes in another format
  /// (`kernels.attention_precision`, else bf16 for 8-bit math on a device
  /// with a bf16 peak): scaled by that format's peak over \p Peak.
  NodeId attentionAtPeak(const ir::Entity &W, const ir::Entity &Precision,
                         const ir::Entity &Accel, NodeId Eta, NodeId Peak);

  /// The routing of workload \p W's \p Model, for its all-to-alls, with
  /// activations of \p ActBytes; reports (and fails on) groups that do not
  /// split the experts, a token allowed more groups than there are, and
  /// routing fields on a model without experts (\p Moe false).
  ExpertRouting expertRouting(const ir::Entity &W, const ir::Entity &Model,
                              NodeId ActBytes, bool Moe);

  /// What an all-to-all gets across nodes (wall 10): the scale-out
  /// bandwidth \p InterBW, at most a device's share of the bisection, and
  /// the latency across the network's diameter (\p InterLatency without
  /// a cluster network).
  std::pair<NodeId, NodeId> allToAllAcross(NodeId InterBW, NodeId InterLatency);

  /// Lowers what the workload runs on: an accelerator, a node or a
  /// cluster (its devices, nodes and node overhead); nullopt when the IR
  /// lacks the accelerator.
  std::optional<System> system(const ir::Entity &Sys);

  // ---- The IR.
  const ir::Entity *entity(const ir::Entity &E, llvm::StringRef Path);
  std::string enumValue(const ir::Entity &E, llvm::StringRef Path);
  template <class Enum>
  std::optional<Enum> enumField(const ir::Entity &E, llvm::StringRef Path) {
    return enumFromSymbol<Enum>(enumValue(E, Path));
  }
  /// A field's folded number, or 1 when it is not a constant.
  double foldedNumber(const ir::Entity &E, llvm::StringRef Path);
  /// The dimension of \p Unit ("tok", "B/s").
  static Dimension unit(const char *Unit);

  // ---- Diagnostics.
  void missing(const ir::Entity &Owner, llvm::StringRef Path,
               llvm::StringRef Why);
  /// One diagnostic per scenario lists every missing input.
  void reportMissing();
  // ---- Expressions over the graph.
  /// An IR expression over fields, lets and this scenario's metrics; nullopt
  /// when it reads a metric the graph lacks (named in \p Missing).
  std::optional<NodeId> expr(const ir::Expr &E, std::string &Missing);
  /// The leaf entity \p E's field \p Path lowered to.
  LeafStatus leafFor(const ir::Entity &E, llvm::StringRef Path, NodeId &Leaf);

  /// Lists the public metrics the graph has and those that apply to its
  /// workload but no wall computes.
  void finishMetrics();

private:
  std::map<const ir::Field *, NodeId> FieldNodes;
  /// The default leaves made so far, one an entity and default: every
  /// reader of a default shares it, so that a sweep, a solve or a
  /// sensitivity that moves it moves it for all of them.
  std::map<std::pair<const ir::Entity *, DefaultId>, NodeId> DefaultNodes;
  std::map<const ir::Let *, NodeId> LetNodes;
  std::vector<std::string> MissingInputs;
  std::vector<const ir::Entity *> MissingOwners;

  std::optional<NodeId> fieldRef(const ir::Expr &E);
};

} // namespace mlsc

#endif
