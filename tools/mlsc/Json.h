//===- Json.h - Streaming JSON for the driver's renderers --------*- C++
//-*-===//
//
// Every JSON output of the driver is written with llvm::json::OStream, as
// it is produced: no document is built and none is parsed back. Numbers are
// printed as mlsc has always printed them (shortest digits that round-trip,
// ".0" on whole doubles, null for NaN and infinity).
//
//===----------------------------------------------------------------------===//
#ifndef MLSC_TOOLS_MLSC_JSON_H
#define MLSC_TOOLS_MLSC_JSON_H

#include "ir/Dimension.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace mlsc::driver {

/// The version of mlsc's JSON formats (docs/json-output.md): every JSON
/// output opens with `"format_version": "1.0"`. A new field raises the
/// minor number; a field removed, renamed or changed in meaning raises the
/// major one.
inline constexpr const char *JsonFormatVersion = "1.0";

/// `"format_version": "1.0"`, the first attribute of every JSON output.
void formatVersion(llvm::json::OStream &J);

/// \p X as a JSON number, or null when it is not finite.
std::string jsonNumber(double X);

/// Writes \p X (a JSON number) as the current value of \p J.
void number(llvm::json::OStream &J, double X);
/// `"key": X` (a JSON number) in the current object of \p J.
void number(llvm::json::OStream &J, llvm::StringRef Key, double X);

/// A quantity: {"value": SI, "unit": "s", "display": "21.07 ms"}; a
/// condition has "value": true or false and "unit": "bool".
void quantity(llvm::json::OStream &J, double SI, const Dimension &D,
              bool IsBool = false);

} // namespace mlsc::driver

#endif
