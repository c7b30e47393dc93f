//===- Json.cpp - Streaming JSON for the driver's renderers ---------------===//

#include "tools/mlsc/Json.h"
#include "runtime/Format.h"

#include <nlohmann/json.hpp>

#include <cmath>

namespace mlsc::driver {

void formatVersion(llvm::json::OStream &J) {
  J.attribute("format_version", JsonFormatVersion);
}

std::string jsonNumber(double X) {
  // nlohmann's serializer (Grisu2) gives the digits mlsc's JSON has always
  // had; it prints NaN and infinity as null.
  return nlohmann::json(X).dump();
}

void number(llvm::json::OStream &J, double X) {
  std::string Text = jsonNumber(X);
  J.rawValue([&](llvm::raw_ostream &OS) { OS << Text; });
}

void number(llvm::json::OStream &J, llvm::StringRef Key, double X) {
  J.attributeBegin(Key);
  number(J, X);
  J.attributeEnd();
}

void quantity(llvm::json::OStream &J, double SI, const Dimension &D,
              bool IsBool) {
  J.object([&] {
    if (IsBool) {
      J.attribute("value", SI != 0);
      J.attribute("unit", "bool");
    } else {
      number(J, "value", SI);
      // JSON has no infinity: a value that was computed and is infinite
      // (an unstable queue's waits) or undefined says so, so that it is
      // never mistaken for one not computed.
      if (std::isnan(SI))
        J.attribute("non_finite", "nan");
      else if (std::isinf(SI))
        J.attribute("non_finite", SI > 0 ? "+inf" : "-inf");
      J.attribute("unit", D.str());
    }
    J.attribute("display", formatQuantity(SI, D, IsBool));
  });
}

} // namespace mlsc::driver
