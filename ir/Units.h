//===- Units.h - The unit table and unit-expression parser ------*- C++ -*-===//
//
// A unit expression is what follows the number in a quantity literal:
// atoms joined by `*` and `/` (left to right), each atom a unit symbol with an
// optional SI or binary prefix and an optional integer power: `TB/s`,
// `USD/kWh`, `kg*m^2/s^2`. Decimal (k M G T P E) and binary (Ki Mi Gi Ti Pi Ei)
// prefixes are distinct, and so are bits (`b`) and bytes (`B`).
//
//===----------------------------------------------------------------------===//
#ifndef MLSC_IR_UNITS_H
#define MLSC_IR_UNITS_H

#include "ir/Dimension.h"

#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>
#include <vector>

namespace mlsc {

/// A unit: multiply a number by Scale to get SI base units of Dim.
struct Unit {
  double Scale = 1.0;
  Dimension Dim;
};

struct UnitParseError {
  unsigned Offset = 0; ///< byte offset of the bad atom in the unit text
  unsigned Length = 0;
  std::string Message;    ///< e.g. "unknown unit `TBs`"
  std::string Suggestion; ///< a replacement for the whole unit text, or ""
  /// No unit has that symbol under any prefix: perhaps a name (`4 GPU`).
  bool UnknownSymbol = false;
};

/// Parses \p Text; on failure fills \p Err and returns nullopt.
std::optional<Unit> parseUnit(llvm::StringRef Text, UnitParseError &Err);

/// For a quantity written as `<number> <Written>` whose dimension should be
/// \p Expected, a unit spelling with the same prefix and the expected
/// dimension (`TB` with [B/s] gives `TB/s`), or nullopt.
std::optional<std::string> suggestUnitFor(llvm::StringRef Written,
                                          const Dimension &Expected);

/// One row of the unit table, for documentation and `mlsc --list-units`.
struct UnitTableRow {
  std::string Symbol;
  std::string Prefixes; ///< "SI", "SI>=k", "SI>=k, binary" or "none"
  double Scale;
  Dimension Dim;
  std::string Meaning;
};
std::vector<UnitTableRow> unitTable();

} // namespace mlsc

#endif
