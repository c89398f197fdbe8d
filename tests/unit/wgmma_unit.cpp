//===- wgmma_unit.cpp - how dots split over warpgroups under wgmma --------===//
#include "lowering/WgmmaTiling.h"

#include "mlir/IR/Builders.h"

#include <catch2/catch.hpp>

using namespace kiln;

namespace {
struct Types {
  mlir::MLIRContext ctx;
  mlir::Builder b{&ctx};
};
} // namespace

TEST_CASE("wgmma tiling: operand type, items and staging offsets", "[wgmma]") {
  Types t;
  std::string why;
  mlir::Type f32 = t.b.getF32Type(), bf16 = t.b.getBF16Type();

  // 64 x 64 over two warpgroups: each takes 32 columns; tf32 reads K in 8s.
  auto sq = WgmmaTiling::get(64, 64, 64, f32, f32, 8, why);
  REQUIRE(succeeded(sq));
  CHECK(sq->operands == WgmmaTiling::Operands::TF32);
  CHECK(sq->kStep == 8);
  CHECK((sq->mTiles == 1 && sq->nParts == 2 && sq->nChunk == 32 && sq->rounds() == 1));
  CHECK(sq->bOffset == 64 * 64 * 4);
  CHECK(sq->dOffset == 2 * 64 * 64 * 4);
  CHECK(sq->dStride == 72);
  CHECK(sq->bytes == sq->dOffset + 64 * 72 * 4);
  // Element (row 9, k 5): second K core column (5 / 4), row 9, column 1.
  CHECK(sq->operandOffset(9, 5, 64) == 1 * 64 * 16 + 9 * 16 + 1 * 4);

  // bf16 on both sides stays bf16 (K in 16s); M = 32 pads to one 64-row tile.
  auto half = WgmmaTiling::get(32, 128, 32, bf16, bf16, 4, why);
  REQUIRE(succeeded(half));
  CHECK(half->operands == WgmmaTiling::Operands::BF16);
  CHECK(half->kStep == 16);
  CHECK((half->rowsA == 64 && half->nParts == 1 && half->nChunk == 128));

  // Two 64-row tiles on one warpgroup: two rounds. N = 512 splits to 256s.
  auto tall = WgmmaTiling::get(128, 512, 16, f32, bf16, 4, why);
  REQUIRE(succeeded(tall));
  CHECK(tall->operands == WgmmaTiling::Operands::TF32);
  CHECK((tall->mTiles == 2 && tall->nParts == 2 && tall->nChunk == 256));
  CHECK((tall->items() == 4 && tall->rounds() == 4));

  // N = 24 does not halve into whole instructions: one part of 24.
  auto odd = WgmmaTiling::get(64, 24, 8, f32, f32, 8, why);
  REQUIRE(succeeded(odd));
  CHECK((odd->nParts == 1 && odd->nChunk == 24 && odd->rounds() == 1));

  CHECK(failed(WgmmaTiling::get(64, 64, 12, f32, f32, 4, why)));
  CHECK(why == "has an inner dim of 12; wgmma on tf32 operands needs a multiple of 8");
  CHECK(failed(WgmmaTiling::get(64, 64, 16, f32, f32, 6, why)));
  CHECK(why == "runs on whole warpgroups, but the role has 6 warps");
}
