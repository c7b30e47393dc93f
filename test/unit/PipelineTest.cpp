//===- PipelineTest.cpp - End-to-end known answers through the pipeline ---===//

#include "passes/Pipeline.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

using namespace mlsc;

namespace {

/// Compiles \p Text without the prelude; returns the compilation.
std::unique_ptr<Compilation> compileText(const std::string &Text,
                                         bool Prelude = false) {
  auto C = std::make_unique<Compilation>();
  C->Options.DataDir = MLSC_SOURCE_DIR;
  C->Options.LoadPrelude = Prelude;
  compile(*C, llvm::MemoryBuffer::getMemBufferCopy(Text, "test.mls"));
  return C;
}

double folded(const Compilation &C, const char *Let) {
  const ir::Let *L = C.Program.LetByName.lookup(Let);
  EXPECT_NE(L, nullptr) << Let;
  if (!L || !L->Folded)
    return std::nan("");
  return L->Folded->Number;
}

std::vector<DiagKind> kinds(const Compilation &C) {
  std::vector<DiagKind> K;
  for (const Diagnostic &D : C.Diags.diagnostics())
    K.push_back(D.Kind);
  return K;
}

TEST(Pipeline, GiBAndGBAreTheSameQuantity) {
  auto C = compileText("let a = 80 GiB\nlet b = 85.899345920 GB\n"
                       "let same = a == b\n");
  ASSERT_FALSE(C->Diags.hasErrors());
  EXPECT_DOUBLE_EQ(folded(*C, "a"), 85899345920.0);
  EXPECT_DOUBLE_EQ(folded(*C, "a"), folded(*C, "b"));
  EXPECT_EQ(folded(*C, "same"), 1.0);
}

TEST(Pipeline, GigabitsAreAnEighthOfGigabytes) {
  auto C = compileText("let a = 400 Gb/s\nlet b = a / (1 GB/s)\n");
  ASSERT_FALSE(C->Diags.hasErrors());
  EXPECT_DOUBLE_EQ(folded(*C, "b"), 50.0);
}

TEST(Pipeline, RidgePointOfH100) {
  auto C = compileText("let r = 989 TFLOP/s / 3.35 TB/s\n");
  ASSERT_FALSE(C->Diags.hasErrors());
  const ir::Let *L = C->Program.LetByName.lookup("r");
  EXPECT_EQ(L->Value->Ty.Dim.str(), "FLOP/B");
  EXPECT_NEAR(folded(*C, "r"), 295.2, 0.05);
}

TEST(Pipeline, BandwidthGivenAsDataSizeIsRejectedWithAHint) {
  auto C = compileText("accelerator A {\n  hbm.capacity = 80 GB\n"
                       "  hbm.bandwidth = 3.35 TB\n  tdp = 700 W\n}\n");
  ASSERT_EQ(C->Diags.diagnostics().size(), 1u);
  const Diagnostic &D = C->Diags.diagnostics().front();
  EXPECT_EQ(D.Kind, DiagKind::FieldDimensionMismatch);
  EXPECT_NE(D.Message.find("expects a bandwidth [B/s], got a data size [B]"),
            std::string::npos);
  EXPECT_NE(D.Message.find("did you mean `3.35 TB/s`?"), std::string::npos);
  auto LC = C->SM.getLineAndColumn(D.Loc);
  EXPECT_EQ(LC.first, 3u);
  EXPECT_EQ(LC.second, 19u);
}

TEST(Pipeline, DerivedEntityOverridesAndInheritsWithOrigins) {
  auto C = compileText(
      "accelerator A {\n  hbm.capacity = 80 GB\n  hbm.bandwidth = 3.35 TB/s\n"
      "  tdp = 700 W\n}\naccelerator B : A { hbm.bandwidth = 2 TB/s }\n"
      "let ratio = B.hbm.bandwidth / A.hbm.bandwidth\n");
  ASSERT_FALSE(C->Diags.hasErrors());
  const ir::Entity *B = C->Program.entity("B");
  ASSERT_NE(B, nullptr);
  EXPECT_EQ(B->field("tdp")->InheritedFrom, C->Program.entity("A"));
  EXPECT_EQ(B->field("hbm.bandwidth")->InheritedFrom, nullptr);
  EXPECT_DOUBLE_EQ(B->field("hbm.bandwidth")->Folded->Number, 2e12);
  EXPECT_NEAR(folded(*C, "ratio"), 2 / 3.35, 1e-12);
}

TEST(Pipeline, OverrideFlowsIntoInheritedExpressions) {
  // `tdp` is computed from `count` in the base; overriding `count` in the
  // derived entity changes the derived `tdp`.
  auto C = compileText("node N { accelerator = A; count = 8; overhead = "
                       "count * 100 W }\nnode M : N { count = 4 }\n"
                       "accelerator A { hbm.capacity = 1 GB; hbm.bandwidth "
                       "= 1 GB/s; tdp = 1 W }\n");
  ASSERT_FALSE(C->Diags.hasErrors());
  EXPECT_DOUBLE_EQ(C->Program.entity("N")->field("overhead")->Folded->Number,
                   800);
  EXPECT_DOUBLE_EQ(C->Program.entity("M")->field("overhead")->Folded->Number,
                   400);
}

TEST(Pipeline, PathsFollowEntityFields) {
  auto C = compileText(
      "accelerator A { hbm.capacity = 80 GB; hbm.bandwidth = 2 TB/s; tdp = "
      "700 W }\nnode N { accelerator = A; count = 8 }\n"
      "cluster K { node = N; nodes = 4 }\n"
      "let total = K.nodes * K.node.count * K.node.accelerator.hbm.capacity\n");
  ASSERT_FALSE(C->Diags.hasErrors());
  EXPECT_DOUBLE_EQ(folded(*C, "total"), 4 * 8 * 80e9);
}

TEST(Pipeline, IndependentErrorsAreAllReported) {
  auto C = compileText("let a = 1 GB + 1 s\nlet b = 2 TBs\nlet c = nope\n");
  std::vector<DiagKind> Expected = {
      DiagKind::UnitMismatch, DiagKind::UnknownUnit, DiagKind::UnknownName};
  std::vector<DiagKind> Got = kinds(*C);
  std::sort(Got.begin(), Got.end());
  std::sort(Expected.begin(), Expected.end());
  EXPECT_EQ(Got, Expected);
}

TEST(Pipeline, ErrorsDoNotCascade) {
  // The unknown unit makes `a` erroneous; `b` and `c` use it silently.
  auto C = compileText("let a = 2 TBs\nlet b = a * 2\nlet c = b + 1 s\n");
  EXPECT_EQ(kinds(*C), std::vector<DiagKind>{DiagKind::UnknownUnit});
}

TEST(Pipeline, SqrtHalvesDimensions) {
  auto C = compileText("let t = sqrt(2 * 60 s * 24 h)\n");
  ASSERT_FALSE(C->Diags.hasErrors());
  EXPECT_EQ(C->Program.LetByName.lookup("t")->Value->Ty.Dim.str(), "s");
  EXPECT_NEAR(folded(*C, "t"), std::sqrt(2 * 60.0 * 86400.0), 1e-9);
}

TEST(Pipeline, PreludePrecisions) {
  auto C = compileText("let w = 70.6e9 * bf16.bytes\n", /*Prelude=*/true);
  ASSERT_FALSE(C->Diags.hasErrors());
  EXPECT_DOUBLE_EQ(folded(*C, "w"), 141.2e9);
}

} // namespace

namespace {

/// Compiles \p Text as \p Name with the prelude; returns the rendered
/// diagnostics and the printed IR (imported modules included).
std::string compiledWith(ModuleCache *Cache, const std::string &Text,
                         const std::string &Name = "main.mls") {
  Compilation C;
  C.Options.DataDir = MLSC_SOURCE_DIR;
  C.Options.Modules = Cache;
  bool OK = compile(C, llvm::MemoryBuffer::getMemBufferCopy(Text, Name));
  std::string Out;
  llvm::raw_string_ostream OS(Out);
  C.Diags.flush(OS);
  if (OK)
    ir::printProgram(C.Program, C.SM, OS, /*IncludeImported=*/true);
  OS.flush();
  return Out;
}

} // namespace

TEST(Pipeline, ModuleCacheGivesTheSameProgramWithoutParsingAgain) {
  const std::string Text = "import registries.hardware.nvidia\n"
                           "let bw = H100_SXM.hbm.bandwidth\n";
  std::string Plain = compiledWith(nullptr, Text);
  ASSERT_NE(Plain.find("H100_SXM"), std::string::npos);
  ModuleCache Cache;
  EXPECT_EQ(compiledWith(&Cache, Text), Plain);
  // The prelude and the registry, each parsed once and kept.
  ASSERT_EQ(Cache.Entries.size(), 2u);
  std::vector<const ast::Module *> Parsed;
  for (const auto &[Path, E] : Cache.Entries) {
    ASSERT_NE(E.Module, nullptr) << Path;
    Parsed.push_back(E.Module.get());
  }
  // What the file system said is kept too: each kept module's real path,
  // and that the path found exists, are asked once (a few system calls a
  // path component).
  for (const auto &[Real, E] : Cache.Entries) {
    size_t Found = 0;
    for (const auto &[Path, R] : Cache.RealPaths)
      if (R == Real) {
        ++Found;
        // (The prelude is loaded by its path, not searched for.)
        if (!llvm::StringRef(Path).endswith("prelude.mls")) {
          ASSERT_EQ(Cache.Exists.count(Path), 1u) << Path;
          EXPECT_TRUE(Cache.Exists.at(Path)) << Path;
        }
      }
    EXPECT_GE(Found, 1u) << Real;
  }
  // The main file, a buffer on no disk, has no real path.
  ASSERT_EQ(Cache.RealPaths.count("main.mls"), 1u);
  EXPECT_FALSE(Cache.RealPaths.at("main.mls").has_value());
  size_t Paths = Cache.RealPaths.size(), Asked = Cache.Exists.size();
  EXPECT_EQ(compiledWith(&Cache, Text), Plain);
  EXPECT_EQ(Cache.RealPaths.size(), Paths);
  EXPECT_EQ(Cache.Exists.size(), Asked);
  size_t K = 0;
  for (const auto &[Path, E] : Cache.Entries)
    EXPECT_EQ(E.Module.get(), Parsed[K++]) << Path << " was parsed again";
}

TEST(Pipeline, ModuleCacheParsesAModuleWithErrorsEachTime) {
  llvm::SmallString<128> Dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("mlsc-cache", Dir));
  llvm::SmallString<128> Broken(Dir);
  llvm::sys::path::append(Broken, "broken.mls");
  {
    std::error_code EC;
    llvm::raw_fd_ostream OS(Broken, EC);
    ASSERT_FALSE(EC);
    OS << "let a = 1 GB +\n";
  }
  llvm::SmallString<128> Main(Dir);
  llvm::sys::path::append(Main, "main.mls");
  const std::string Text = "import broken\nlet b = 2\n";
  std::string Plain = compiledWith(nullptr, Text, std::string(Main));
  ASSERT_NE(Plain.find("broken.mls:2:1: error"), std::string::npos) << Plain;
  ModuleCache Cache;
  // Its diagnostics, located in the kept buffer, every time.
  EXPECT_EQ(compiledWith(&Cache, Text, std::string(Main)), Plain);
  EXPECT_EQ(compiledWith(&Cache, Text, std::string(Main)), Plain);
  for (const auto &[Path, E] : Cache.Entries) {
    if (llvm::StringRef(Path).endswith("broken.mls")) {
      EXPECT_EQ(E.Module, nullptr);
    }
  }
  llvm::sys::fs::remove(Broken);
  llvm::sys::fs::remove(Dir);
}
