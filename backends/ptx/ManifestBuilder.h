//===- ManifestBuilder.h - a manifest from a scheduled kernel --*- C++ -*-===//
#ifndef KILN_BACKENDS_PTX_MANIFESTBUILDER_H
#define KILN_BACKENDS_PTX_MANIFESTBUILDER_H

#include "backends/runtime/Manifest.h"
#include "dsl/TileDialect.h"

namespace kiln {

/// The launch facts of a scheduled kernel (after tile-apply-schedule):
/// parameters, block size, and the grid extents as expressions over the
/// runtime dims, in launch order (x fastest). Fails on a grid extent that is
/// not built from dims and constants with + - * / and ceildiv. The dynamic
/// shared memory and the TMA tensor maps are completed from the lowered
/// kernel's attributes (buildForGpu).
bool buildManifest(tile::KernelOp kernel, KernelManifest &out, std::string &error);

/// A dim expression attribute (kiln::dimExprOf) in the manifest's JSON form.
json::Value gridExprJson(mlir::Attribute e);

} // namespace kiln

#endif
