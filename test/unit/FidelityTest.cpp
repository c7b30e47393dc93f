//===- FidelityTest.cpp - Known answers for wall 13 (fidelity) ------------===//
//
// Each expected value is a published figure or a hand calculation written
// out in the test.
//
//===----------------------------------------------------------------------===//

#include "runtime/walls/Formulas.h"

#include <gtest/gtest.h>

using namespace mlsc;
using namespace mlsc::q;
using namespace mlsc::walls;

namespace {

const Number One = in<Number>(1), Zero = in<Number>(0);
// Dense tensor-core peaks from NVIDIA's datasheets (registries/hardware).
const FlopRate H100Bf16 = in<FlopRate>(989e12), H100Fp8 = in<FlopRate>(1979e12);
const FlopRate A100Bf16 = in<FlopRate>(312e12), A100Fp8 = in<FlopRate>(0);
const Bytes Bf16 = in<Bytes>(2), Fp8 = in<Bytes>(1);

TEST(FidelityWall, WeightBytesAtAPrecision) {
  Number N = in<Number>(70e9);
  // bf16: 70e9 x 16 / 8 = 140 GB; fp8 with per-tensor scales: 70 GB.
  EXPECT_DOUBLE_EQ(quantizedWeightBytes(N, in<Number>(16), One, Zero).value(),
                   140e9);
  EXPECT_DOUBLE_EQ(quantizedWeightBytes(N, in<Number>(8), One, Zero).value(),
                   70e9);
  // int4 with a 16-bit scale per group of 128: 4 + 16/128 = 4.125 bits,
  // 70e9 x 4.125 / 8 = 36.09375 GB.
  EXPECT_DOUBLE_EQ(
      quantizedWeightBytes(N, in<Number>(4), in<Number>(128), in<Number>(16))
          .value(),
      36.09375e9);
}

TEST(FidelityWall, Fp8OverBf16MemoryBoundIsTheBytesRatio) {
  // Half the bytes per element: 2x, on H100 and on A100 (weight-only
  // kernels dequantize on the fly).
  EXPECT_DOUBLE_EQ(
      quantizationSpeedup(Bf16, Fp8, H100Bf16, H100Fp8, Zero).value(), 2.0);
  EXPECT_DOUBLE_EQ(
      quantizationSpeedup(Bf16, Fp8, A100Bf16, A100Fp8, Zero).value(), 2.0);
}

TEST(FidelityWall, Fp8OverBf16ComputeBoundIsThePeakRatio) {
  // H100: 1,979 / 989 = 2.001.
  EXPECT_NEAR(quantizationSpeedup(Bf16, Fp8, H100Bf16, H100Fp8, One).value(),
              2.001, 5e-4);
  // A100 has no fp8 tensor cores: the math stays bf16, no speedup.
  EXPECT_EQ(quantizationSpeedup(Bf16, Fp8, A100Bf16, A100Fp8, One).value(),
            1.0);
}

TEST(FidelityWall, WeightOnlyFp8OnALlama70BDecodeStep) {
  // Batch 32 at context 2,048 with a bf16 KV cache (320 KiB/token):
  // KV = 32 x 2,048 x 327,680 B = 21.475 GB. Weights 141.2 GB in bf16,
  // 70.6 GB in fp8: (141.2 + 21.475) / (70.6 + 21.475) = 1.767, not 2.
  BytesPerToken KV =
      kvBytesPerToken(in<Number>(80), in<Number>(8), in<Number>(128), Bf16);
  Number P = in<Number>(70.6e9), B = in<Number>(32);
  Tokens Ctx = in<Tokens>(2048);
  Bytes Base =
      decodeStepBytes(weightBytesPerDevice(P, Bf16, One, One), KV, B, Ctx, One);
  Bytes Quant =
      decodeStepBytes(weightBytesPerDevice(P, Fp8, One, One), KV, B, Ctx, One);
  double KVBytes = 32 * 2048 * 327680.0;
  EXPECT_NEAR(quantizationSpeedup(Base, Quant, H100Bf16, H100Fp8, Zero).value(),
              (141.2e9 + KVBytes) / (70.6e9 + KVBytes), 1e-12);
  EXPECT_NEAR(quantizationSpeedup(Base, Quant, H100Bf16, H100Fp8, Zero).value(),
              1.767, 5e-4);
}

TEST(FidelityWall, AccuracyDeltaIsPassedThrough) {
  EXPECT_EQ(accuracyDelta(in<Number>(-0.012)).value(), -0.012);
}

TEST(FidelityWall, FormulasCarryWallAndDimensions) {
  EXPECT_EQ(formula(FormulaId::QuantizationSpeedup).W, Wall::Fidelity);
  EXPECT_EQ(formula(FormulaId::AccuracyDelta).W, Wall::Fidelity);
  EXPECT_EQ(formula(FormulaId::QuantizedWeightBytes).Result.str(), "B");
  ASSERT_EQ(formula(FormulaId::QuantizationSpeedup).Params.size(), 5u);
  EXPECT_EQ(formula(FormulaId::QuantizationSpeedup).Params[2].str(), "FLOP/s");
  EXPECT_TRUE(formula(FormulaId::QuantizationSpeedup).Result.isDimensionless());
}

} // namespace

namespace {

TEST(FidelityWall, BlockScaledFormatsCarryTheirScales) {
  Bytes Half = in<Bytes>(0.5);
  // MXFP4 (OCP MX v1.0): 32 E2M1 values share an 8-bit E8M0 scale:
  // 0.5 + 8 / (8 x 32) = 0.53125 B, 4.25 bits.
  EXPECT_DOUBLE_EQ(
      scaledElementBytes(Half, in<Number>(8), in<Number>(32)).value(), 0.53125);
  // NVFP4: 16 values share an 8-bit E4M3 scale: 0.5625 B, 4.5 bits
  // (NVIDIA's "3.5x" smaller than FP16: 2 / 0.5625 = 3.56).
  EXPECT_DOUBLE_EQ(
      scaledElementBytes(Half, in<Number>(8), in<Number>(16)).value(), 0.5625);
  // gpt-fast int4, group 32, a bf16 scale and a bf16 zero a group:
  // 0.5 + 32 / 256 = 0.625 B; Llama-2-7B's 6.61e9 linear weights take
  // 4.13 GB, with the 0.26 GB bf16 embedding the 4.38 GB its README
  // implies (862.69 GB/s / 196.80 tok/s).
  Bytes G32 = scaledElementBytes(Half, in<Number>(32), in<Number>(32));
  EXPECT_DOUBLE_EQ(G32.value(), 0.625);
  EXPECT_NEAR((6.607e9 * G32.value() + 0.262e9) / (862.69 / 196.80) / 1e9, 1,
              0.01);
  // The library formula agrees for a whole tensor.
  EXPECT_DOUBLE_EQ(quantizedWeightBytes(in<Number>(1e9), in<Number>(4),
                                        in<Number>(32), in<Number>(32))
                       .value(),
                   1e9 * G32.value());
}

TEST(FidelityWall, PrunedBytesPerWeight) {
  // 2:4 in bf16: half the values plus a 2-bit index each:
  // 0.5 x (2 + 0.25) = 1.125 B per original weight.
  EXPECT_DOUBLE_EQ(prunedBytesPerParam(Bf16, in<Number>(0.5), One).value(),
                   1.125);
  // Unstructured 70%: 0.3 x 2 B + a 1-bit bitmap = 0.725 B; at 5% the
  // bitmap costs more than the zeros save: 1.9 + 0.125 > 2.
  EXPECT_DOUBLE_EQ(prunedBytesPerParam(Bf16, in<Number>(0.7), Zero).value(),
                   0.725);
  EXPECT_GT(prunedBytesPerParam(Bf16, in<Number>(0.05), Zero).value(), 2.0);
}

TEST(FidelityWall, SparseTensorCoresOnlyHelpStructuredPruning) {
  Number Two = in<Number>(2);
  // 2:4 on Ampere-class cores: half the GEMM time.
  EXPECT_DOUBLE_EQ(sparseGemmTimeFactor(in<Number>(0.5), One, Two).value(),
                   0.5);
  // More sparsity than the hardware pattern exploits is capped at 1/2.
  EXPECT_DOUBLE_EQ(sparseGemmTimeFactor(in<Number>(0.75), One, Two).value(),
                   0.5);
  // Unstructured zeros, or a device without sparse cores: no speedup.
  EXPECT_DOUBLE_EQ(sparseGemmTimeFactor(in<Number>(0.5), Zero, Two).value(),
                   1.0);
  EXPECT_DOUBLE_EQ(sparseGemmTimeFactor(in<Number>(0.5), One, One).value(),
                   1.0);
}

} // namespace
