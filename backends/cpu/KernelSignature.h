//===- KernelSignature.h - a tile kernel's signature ------------*- C++ -*-===//
#ifndef KILN_BACKENDS_CPU_KERNELSIGNATURE_H
#define KILN_BACKENDS_CPU_KERNELSIGNATURE_H

#include "backends/runtime/OpPlan.h"
#include "backends/runtime/Signature.h"

namespace kiln::tile {
class KernelOp;
class HostOp;
} // namespace kiln::tile

namespace kiln {

/// The host-side signature of a tile kernel: runtime dims and parameters.
KernelSignature signatureOf(tile::KernelOp kernel);

/// The launch plan of a tile.op: its signature, scratch tensors and launches.
OpPlan planOf(tile::HostOp op);

} // namespace kiln

#endif
