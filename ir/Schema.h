//===- Schema.h - Entity kinds, their fields and metrics --------*- C++ -*-===//
//
// Each entity kind declares its fields with expected types and dimensions
// (Schema.def). Passes check entities against these schemas; the evaluator
// and the walls read fields by the same paths.
//
//===----------------------------------------------------------------------===//
#ifndef MLSC_IR_SCHEMA_H
#define MLSC_IR_SCHEMA_H

#include "ir/Dimension.h"
#include "ir/Domain.h"

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>

#include <string>
#include <vector>

namespace mlsc {

enum class FieldType {
  Quantity,
  Entity,
  Enum,
  String,
  Date,
  Bool,
  Constraints, ///< a block of conditions: `sla { ttft.p99 < 500 ms }`
  Terms,       ///< a block of expressions: `report { throughput; ttft.p99 }`
};

/// Fields written as a block of items rather than `name = value`.
inline bool isBlockField(FieldType T) {
  return T == FieldType::Constraints || T == FieldType::Terms;
}

struct FieldSchema {
  std::string Path; ///< "hbm.bandwidth"
  FieldType Type;
  /// Quantity: its dimension and the unit written in Schema.def; Terms: a
  /// histogram's (`WEIGHT in LO .. HI` lines) bounds', or none.
  Dimension Dim;
  std::string UnitSpelling;
  std::vector<std::string> Allowed; ///< Entity: kinds; Enum: symbols
  bool Required;
  std::string Doc;
  ValueDomain Domain = ValueDomain::Any;
  /// A workload field only one mode reads ("training" or "inference";
  /// Schema.def, MODE_ONLY); empty when both do.
  std::string OnlyMode;
};

struct MetricSchema {
  std::string Path;
  bool IsBool;
  Dimension Dim;
  std::string UnitSpelling;
  std::string Doc;
};

struct KindSchema {
  std::string Name;
  std::string Doc;
  std::vector<FieldSchema> Fields;
  std::vector<MetricSchema> Metrics;
  /// Metrics a condition may name besides the public ones: a scenario's
  /// internal metrics and its phases' (`decode.comm_time`), what `mlsc
  /// explain` shows. Not listed in the language reference's tables.
  std::vector<MetricSchema> MoreMetrics;
  std::string VariantField; ///< "" when the kind has no variants
  std::vector<std::string> Variants;

  const FieldSchema *field(llvm::StringRef Path) const;
  const MetricSchema *metric(llvm::StringRef Path) const;
  /// True when some field lives under `Prefix.` (so `Prefix { ... }` is a
  /// valid block).
  bool hasFieldsUnder(llvm::StringRef Prefix) const;
  bool isVariant(llvm::StringRef Name) const;
};

const std::vector<KindSchema> &allKinds();

// The named enumerations of Schema.def, as C++ enums in symbol order.
#define ENUM_BEGIN(Type) enum class Type : uint8_t {
#define ENUM_VALUE(Type, Value, Symbol) Value,
#define ENUM_END(Type)                                                         \
  }                                                                            \
  ;
#include "ir/Schema.def"

template <class E> struct EnumType;
#define ENUM_BEGIN(Type)                                                       \
  template <> struct EnumType<Type> {                                          \
    static constexpr const char *Name = #Type;                                 \
  };
#include "ir/Schema.def"

/// The position of \p Symbol in enumeration \p Type, or -1.
int enumIndex(llvm::StringRef Type, llvm::StringRef Symbol);

/// \p Symbol as a value of enum \p E, when it is one of its symbols.
template <class E> std::optional<E> enumFromSymbol(llvm::StringRef Symbol) {
  int I = enumIndex(EnumType<E>::Name, Symbol);
  if (I < 0)
    return std::nullopt;
  return static_cast<E>(I);
}
const KindSchema *findKind(llvm::StringRef Name);

/// "a quantity [B/s]", "a reference to a node or cluster", "one of a|b".
std::string describeFieldType(const FieldSchema &F);

/// \p Noun with its indefinite article: "a node", "an accelerator".
std::string withArticle(llvm::StringRef Noun);

/// The candidate closest to \p Word by edit distance, or "" when none is
/// close enough to suggest. Words longer than 64 characters get no
/// suggestion, and only candidates whose length is within the distance
/// limit are compared. \p Budget, when given, is the number of distances a
/// caller may still compute; each candidate compared spends one, and an
/// empty budget suggests nothing (5,000 unknown names among 20,000 took
/// 10 s before).
std::string closestMatch(llvm::StringRef Word,
                         const std::vector<std::string> &Candidates,
                         size_t *Budget = nullptr);

} // namespace mlsc

#endif
