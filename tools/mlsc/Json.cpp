//===- Json.cpp - Streaming JSON for the driver's renderers ---------------===//

#include "tools/mlsc/Json.h"
#include "runtime/Format.h"

#include <nlohmann/json.hpp>

namespace mlsc::driver {

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
      J.attribute("unit", D.str());
    }
    J.attribute("display", formatQuantity(SI, D, IsBool));
  });
}

} // namespace mlsc::driver
