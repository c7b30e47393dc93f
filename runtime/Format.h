//===- Format.h - Numbers for people: units and significant digits -*- C++
//-*-===//
//
// Every quantity prints with four significant digits in a unit chosen for its
// size (`21.07 ms`, `141.2 GB`, `989.0 TFLOP/s`), deterministically, so golden
// tests do not flap. Rules in docs/json-output.md.
//
//===----------------------------------------------------------------------===//
#ifndef MLSC_RUNTIME_FORMAT_H
#define MLSC_RUNTIME_FORMAT_H

#include "ir/Dimension.h"

#include <string>

namespace mlsc {

/// `21.07 ms` for 0.02107 s; `true`/`false` when \p IsBool.
std::string formatQuantity(double SI, const Dimension &D, bool IsBool = false);

/// Four significant digits without a unit: `295.2`, `7.060e+10`.
std::string formatNumber(double V);

} // namespace mlsc

#endif
