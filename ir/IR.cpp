//===- IR.cpp - The typed intermediate representation ---------------------===//

#include "ir/IR.h"

#include "llvm/ADT/StringExtras.h"

#include <fmt/format.h>

namespace mlsc::ir {

std::string Type::str() const {
  switch (Kind) {
  case TypeKind::Error:
    return "<error>";
  case TypeKind::Quantity:
    return "[" + Dim.str() + "]";
  case TypeKind::Bool:
    return "bool";
  case TypeKind::String:
    return "string";
  case TypeKind::Date:
    return "date";
  case TypeKind::Entity:
    return Name.empty() ? "entity" : Name;
  case TypeKind::Enum:
    return "symbol";
  case TypeKind::List: {
    Type E;
    E.Kind = Elem;
    E.Dim = Dim;
    return "list of " + E.str();
  }
  }
  return "";
}

const char *spelling(UnaryOp Op) {
  switch (Op) {
  case UnaryOp::Negate:
    return "-";
  case UnaryOp::Plus:
    return "+";
  case UnaryOp::Not:
    return "not";
  }
  return "?";
}

const char *spelling(BinaryOp Op) {
  static const char *const Names[] = {"+", "-",  "*",  "/",  "^",  "<",   "<=",
                                      ">", ">=", "==", "!=", "in", "and", "or"};
  return Names[static_cast<unsigned>(Op)];
}

const char *builtinName(Builtin B) {
  static const char *const Names[] = {"min",   "max",   "ceil", "floor",
                                      "round", "abs",   "sqrt", "log",
                                      "log2",  "log10", "exp"};
  return Names[static_cast<unsigned>(B)];
}

Field *Entity::field(llvm::StringRef Path) {
  for (Field &F : Fields)
    if (F.Path == Path)
      return &F;
  return nullptr;
}

const Field *Entity::field(llvm::StringRef Path) const {
  return const_cast<Entity *>(this)->field(Path);
}

static std::string number(double V) { return fmt::format("{:.6g}", V); }

std::string exprToString(const Expr &E) {
  auto sub = [&](size_t I) { return exprToString(*E.Operands[I]); };
  switch (E.Kind) {
  case ExprKind::Number:
    return E.Spelling;
  case ExprKind::String:
    return "\"" + E.Spelling + "\"";
  case ExprKind::Date:
    return fmt::format("{:04}-{:02}-{:02}", E.Year, E.Month, E.Day);
  case ExprKind::Bool:
    return E.BoolValue ? "true" : "false";
  case ExprKind::EnumSymbol:
    return E.Spelling;
  case ExprKind::EntityRef:
    return "@" + E.Target->Name;
  case ExprKind::FieldRef:
    return E.Target->Name + "." + llvm::join(E.Path, ".");
  case ExprKind::MetricRef:
    return E.Target->Name + "." + llvm::join(E.Path, ".") + "{metric}";
  case ExprKind::LetRef:
    return E.LetTarget->Name;
  case ExprKind::Call: {
    std::vector<std::string> Args;
    for (size_t I = 0; I < E.Operands.size(); ++I)
      Args.push_back(sub(I));
    return std::string(builtinName(E.Fn)) + "(" + llvm::join(Args, ", ") + ")";
  }
  case ExprKind::Unary:
    return std::string("(") + spelling(E.UOp) +
           (E.UOp == UnaryOp::Not ? " " : "") + sub(0) + ")";
  case ExprKind::Binary:
    return "(" + sub(0) + " " + spelling(E.BOp) + " " + sub(1) + ")";
  case ExprKind::List: {
    std::vector<std::string> Items;
    for (size_t I = 0; I < E.Operands.size(); ++I)
      Items.push_back(sub(I));
    return "[" + llvm::join(Items, ", ") + "]";
  }
  case ExprKind::Range:
    return "(" + sub(0) + " .. " + sub(1) +
           (E.Operands.size() > 2 ? " step " + sub(2) : "") + ")";
  case ExprKind::Error:
    return "<error>";
  }
  return "";
}

std::string valueToString(const Value &V) {
  switch (V.Kind) {
  case TypeKind::Error:
    return "<error>";
  case TypeKind::Quantity:
    return V.Dim.isDimensionless() ? number(V.Number)
                                   : number(V.Number) + " " + V.Dim.str();
  case TypeKind::Bool:
    return V.Number != 0 ? "true" : "false";
  case TypeKind::String:
    return "\"" + V.Text + "\"";
  case TypeKind::Date:
    return fmt::format("{:04}-{:02}-{:02}", V.Year, V.Month, V.Day);
  case TypeKind::Entity:
    return "@" + (V.Ref ? V.Ref->Name : std::string("?"));
  case TypeKind::Enum:
    return V.Text;
  case TypeKind::List: {
    std::vector<std::string> Items;
    for (const Value &I : V.Items)
      Items.push_back(valueToString(I));
    return "[" + llvm::join(Items, ", ") + "]";
  }
  }
  return "";
}

} // namespace mlsc::ir
