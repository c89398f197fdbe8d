//===- wgmma_unit.cpp - how dots split over warpgroups under wgmma --------===//
#include "lowering/WgmmaTiling.h"

#include "mlir/IR/Builders.h"

#include <catch2/catch.hpp>

#include <set>

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
  // K rows of 256 bytes swizzle in 128-byte blocks. Element (row 9, k 5):
  // byte 20 of row 9 of the first block, its 16-byte piece (1) permuted by
  // the row (9 % 8 = 1) to piece 0. k 37 is in the second block.
  CHECK(sq->swizzleBytes == 128);
  CHECK(sq->operandOffset(9, 5, 64, true) == 9 * 128 + (1 ^ 1) * 16 + 4);
  CHECK(sq->operandOffset(9, 37, 64, true) == 64 * 128 + 9 * 128 + (1 ^ 1) * 16 + 4);
  CHECK(sq->operandOffset(3, 0, 64, true) == 3 * 128 + (0 ^ 3) * 16);
  // 8 rows of one piece, and 8 pieces of one row, fall in 8 bank groups.
  std::set<int64_t> column, row;
  for (int64_t i = 0; i < 8; ++i) {
    column.insert(sq->operandOffset(i, 0, 64, true) % 128 / 16);
    row.insert(sq->operandOffset(5, 4 * i, 64, true) % 128 / 16);
  }
  CHECK((column.size() == 8 && row.size() == 8));
  CHECK(sq->descriptorBits(64, true) == (int64_t(1) << 62 | int64_t(1024 / 16) << 32 | 1 << 16));
  // Plain core matrices (operands written one element of K per thread):
  // 16 bytes of a row per K block, no permutation; K blocks 64 x 16 apart.
  CHECK(sq->operandOffset(9, 5, 64, false) == 1 * 64 * 16 + 9 * 16 + 1 * 4);
  CHECK(sq->descriptorBits(64, false) == (int64_t(128 / 16) << 32 | int64_t(64 * 16 / 16) << 16));

  // bf16 on both sides stays bf16 (K in 16s); M = 32 pads to one 64-row tile.
  auto half = WgmmaTiling::get(32, 128, 32, bf16, bf16, 4, why);
  REQUIRE(succeeded(half));
  CHECK(half->operands == WgmmaTiling::Operands::BF16);
  CHECK(half->kStep == 16);
  CHECK((half->rowsA == 64 && half->nParts == 1 && half->nChunk == 128));
  // 32 bf16 of K are 64 bytes a row: the 64-byte swizzle (mode 2), which
  // permutes pieces by row / 2.
  CHECK(half->swizzleBytes == 64);
  CHECK(half->bOffset % WgmmaTiling::kAtomAlignment == 0);
  CHECK(half->operandOffset(2, 8, 64, true) == 2 * 64 + (1 ^ 1) * 16);
  CHECK(uint64_t(half->descriptorBits(64, true)) >> 62 == 2);

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
  CHECK(odd->swizzleBytes == 32); // 8 tf32 of K
  CHECK(uint64_t(odd->descriptorBits(24, true)) >> 62 == 3);

  CHECK(failed(WgmmaTiling::get(64, 64, 12, f32, f32, 4, why)));
  CHECK(why == "has an inner dim of 12; wgmma on tf32 operands needs a multiple of 8");
  CHECK(failed(WgmmaTiling::get(64, 64, 16, f32, f32, 6, why)));
  CHECK(why == "runs on whole warpgroups, but the role has 6 warps");
}
