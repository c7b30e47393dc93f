//===- Report.h - Scorecards, explanations and dumps --------------*- C++
//-*-===//
//
// Turns evaluated graphs into what users read: the scorecard of `mlsc eval`,
// the condition results of `mlsc check`, the derivation tree of
// `mlsc explain`, the `--emit=graph` dump and the `mlsc walls` table, each as
// text or as JSON (schema: docs/json-output.md).
//
//===----------------------------------------------------------------------===//
#ifndef MLSC_RUNTIME_REPORT_H
#define MLSC_RUNTIME_REPORT_H

#include "ir/Graph.h"
#include "runtime/Evaluator.h"

#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <nlohmann/json.hpp>

namespace mlsc {

/// The outcome of one condition after evaluation.
enum class Verdict { Pass, Fail, Unknown };
Verdict verdict(const graph::Condition &C, const Evaluator &E);

/// `file.mls:12:3`.
std::string location(llvm::SourceMgr &SM, llvm::SMRange R);

/// A comparison node's two sides at the evaluator's values,
/// "6.211 ms vs 40 ms"; "" for any other node.
std::string comparisonOperands(const Evaluator &E, graph::NodeId Node);

void printScorecard(const Evaluator &E, llvm::SourceMgr &SM,
                    llvm::raw_ostream &OS);
nlohmann::ordered_json scorecardJSON(const Evaluator &E, llvm::SourceMgr &SM);

/// A quantity as JSON: {"value": SI, "unit": "s", "display": "21.07 ms"}.
nlohmann::ordered_json quantityJSON(double SI, const Dimension &D,
                                    bool IsBool = false);

void printExplain(const Evaluator &E, graph::NodeId Node, llvm::SourceMgr &SM,
                  llvm::raw_ostream &OS);
nlohmann::ordered_json explainJSON(const Evaluator &E, graph::NodeId Node,
                                   llvm::SourceMgr &SM);

/// `explain --leaves`: the leaves a value depends on, grouped: imported
/// modules (registries), the scenario file, assumed defaults, formula
/// constants; estimates and calibrated factors marked.
void printLeaves(const Evaluator &E, graph::NodeId Node, llvm::SourceMgr &SM,
                 unsigned MainBuffer, llvm::raw_ostream &OS);
nlohmann::ordered_json leavesJSON(const Evaluator &E, graph::NodeId Node,
                                  llvm::SourceMgr &SM, unsigned MainBuffer);

void printGraph(const graph::Graph &G, llvm::SourceMgr &SM,
                llvm::raw_ostream &OS);

void printWalls(llvm::raw_ostream &OS);
nlohmann::ordered_json wallsJSON();

} // namespace mlsc

#endif
