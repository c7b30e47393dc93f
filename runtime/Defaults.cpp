//===- Defaults.cpp - Defaults and calibrated factors, in one table -------===//

#include "runtime/Defaults.h"
#include "ir/Units.h"

#include "llvm/ADT/Twine.h"
#include "llvm/Support/ErrorHandling.h"

#include <fmt/args.h>
#include <fmt/format.h>

#include <limits>

namespace mlsc {

namespace {

constexpr double NoDefault = std::numeric_limits<double>::quiet_NaN();
constexpr double NoRange = std::numeric_limits<double>::quiet_NaN();

/// The SI scale of a unit written in the table.
double scaleOf(const char *Spelling) {
  if (llvm::StringRef(Spelling) == "1")
    return 1;
  UnitParseError Err;
  std::optional<Unit> U = parseUnit(Spelling, Err);
  if (!U)
    llvm::report_fatal_error(llvm::Twine("Defaults.def: bad unit `") +
                             Spelling + "`");
  return U->Scale;
}

const std::vector<DefaultInfo> &table() {
  static const std::vector<DefaultInfo> Table = {
#define DEFAULT(Id, Kind, Field, Value, Unit, Low, High, W, Calibrated, Note,  \
                Evidence)                                                      \
  {DefaultId::Id,                                                              \
   #Kind,                                                                      \
   Field,                                                                      \
   (Value)*scaleOf(Unit),                                                      \
   Unit,                                                                       \
   Value,                                                                      \
   (Low)*scaleOf(Unit),                                                        \
   (High)*scaleOf(Unit),                                                       \
   Wall::W,                                                                    \
   Calibrated,                                                                 \
   Note,                                                                       \
   Evidence},
#include "runtime/Defaults.def"
  };
  return Table;
}

} // namespace

double DefaultInfo::scale() const { return scaleOf(Unit); }

std::string DefaultInfo::note() const {
  fmt::dynamic_format_arg_store<fmt::format_context> Args;
  Args.push_back(fmt::arg("default", Written));
  Args.push_back(fmt::arg("low", Low / scaleOf(Unit)));
  Args.push_back(fmt::arg("high", High / scaleOf(Unit)));
  Args.push_back(fmt::arg("evidence", Evidence));
  return fmt::vformat(NoteTemplate, Args);
}

llvm::ArrayRef<DefaultInfo> allDefaults() { return table(); }

const DefaultInfo &defaultInfo(DefaultId Id) {
  return table()[static_cast<unsigned>(Id)];
}

const DefaultInfo *findDefault(llvm::StringRef Kind, llvm::StringRef Field) {
  for (const DefaultInfo &D : table())
    if (Kind == D.Kind && Field == D.Field)
      return &D;
  return nullptr;
}

bool isCalibratedField(llvm::StringRef Field) {
  for (const DefaultInfo &D : table())
    if (Field == D.Field)
      return D.Calibrated;
  return false;
}

} // namespace mlsc
