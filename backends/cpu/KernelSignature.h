//===- KernelSignature.h - a tile kernel's signature ------------*- C++ -*-===//
#ifndef KILN_BACKENDS_CPU_KERNELSIGNATURE_H
#define KILN_BACKENDS_CPU_KERNELSIGNATURE_H

#include "backends/runtime/Signature.h"

namespace kiln::tile {
class KernelOp;
}

namespace kiln {

/// The host-side signature of a tile kernel: runtime dims and parameters.
KernelSignature signatureOf(tile::KernelOp kernel);

} // namespace kiln

#endif
