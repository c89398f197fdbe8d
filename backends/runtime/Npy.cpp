//===- Npy.cpp - numpy .npy files in and out ------------------------------===//
#include "backends/runtime/Npy.h"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>

using namespace kiln;

int64_t NpyArray::numel() const {
  int64_t n = 1;
  for (int64_t s : shape)
    n *= s;
  return n;
}

/// The value of `'key': ` in the header's dict, up to the next top-level
/// comma or brace (a tuple keeps its commas).
static bool headerField(const std::string &h, const std::string &key, std::string &value) {
  size_t at = h.find("'" + key + "'");
  if (at == std::string::npos)
    return false;
  at = h.find(':', at);
  if (at == std::string::npos)
    return false;
  size_t i = at + 1, depth = 0;
  while (i < h.size() && h[i] == ' ')
    ++i;
  size_t start = i;
  for (; i < h.size(); ++i) {
    if (h[i] == '(')
      ++depth;
    else if (h[i] == ')' && depth)
      --depth;
    else if ((h[i] == ',' || h[i] == '}') && !depth)
      break;
  }
  value = h.substr(start, i - start);
  while (!value.empty() && value.back() == ' ')
    value.pop_back();
  return true;
}

bool kiln::readNpy(const std::string &path, NpyArray &out, std::string &error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = "cannot read '" + path + "'";
    return false;
  }
  std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto bad = [&](const std::string &why) {
    error = path + ": " + why;
    return false;
  };
  if (data.size() < 10 || data.compare(0, 6, "\x93NUMPY") != 0)
    return bad("not a .npy file (no \\x93NUMPY magic)");
  uint8_t major = data[6];
  size_t headerLen, headerAt;
  if (major == 1) {
    headerLen = (uint8_t)data[8] | (uint8_t)data[9] << 8;
    headerAt = 10;
  } else if (major == 2 || major == 3) {
    if (data.size() < 12)
      return bad("truncated header");
    headerLen = 0;
    for (int b = 3; b >= 0; --b)
      headerLen = headerLen << 8 | (uint8_t)data[8 + b];
    headerAt = 12;
  } else {
    return bad("unknown .npy version " + std::to_string(major));
  }
  if (data.size() < headerAt + headerLen)
    return bad("truncated header");
  std::string h = data.substr(headerAt, headerLen), descr, fortran, shape;
  if (!headerField(h, "descr", descr) || !headerField(h, "fortran_order", fortran) ||
      !headerField(h, "shape", shape))
    return bad("malformed header '" + h + "'");
  if (descr.size() < 3 || (descr[0] != '\'' && descr[0] != '"'))
    return bad("unsupported dtype " + descr + " (a structured dtype?)");
  out.descr = descr.substr(1, descr.size() - 2);
  if (out.descr[0] == '>')
    return bad("big-endian data (" + out.descr + "); save it little-endian");
  if (fortran != "False")
    return bad("Fortran-order data; save a C-contiguous array (np.ascontiguousarray)");
  if (shape.size() < 2 || shape.front() != '(' || shape.back() != ')')
    return bad("malformed shape " + shape);
  out.shape.clear();
  std::string dims = shape.substr(1, shape.size() - 2);
  for (size_t i = 0; i < dims.size();) {
    while (i < dims.size() && (dims[i] == ' ' || dims[i] == ','))
      ++i;
    if (i == dims.size())
      break;
    char *end = nullptr;
    long long n = std::strtoll(dims.c_str() + i, &end, 10);
    if (end == dims.c_str() + i || n < 0)
      return bad("malformed shape " + shape);
    if (n > kLargestDim)
      return bad("shape " + shape + " has a dim past 2^31 - 1");
    out.shape.push_back(n);
    i = end - dims.c_str();
  }
  int64_t itemBytes = std::strtoll(out.descr.c_str() + 2, nullptr, 10);
  if (itemBytes <= 0)
    return bad("unsupported dtype '" + out.descr + "'");
  // In double: dims below 2^31 can still multiply past 64 bits. Data that
  // holds as many bytes holds fewer than 2^53, where the double is exact.
  double wantExact = (double)itemBytes;
  for (int64_t s : out.shape)
    wantExact *= (double)s;
  size_t have = data.size() - headerAt - headerLen;
  if ((double)have < wantExact) {
    char want[32];
    std::snprintf(want, sizeof want, wantExact < 1e15 ? "%.0f" : "%.3g", wantExact);
    return bad("truncated data: " + std::to_string(have) + " bytes for " + want + " (shape " +
               shape + ", dtype " + out.descr + ")");
  }
  size_t want = out.numel() * itemBytes;
  out.bytes.assign(data.begin() + headerAt + headerLen, data.begin() + headerAt + headerLen + want);
  return true;
}

const char *kiln::npyDescr(DType t) {
  switch (t) {
  case DType::F32:
    return "<f4";
  case DType::F64:
    return "<f8";
  case DType::F16:
    return "<f2";
  case DType::BF16:
    return "<u2";
  case DType::I8:
    return "|i1";
  case DType::I32:
    return "<i4";
  case DType::I64:
    return "<i8";
  case DType::F8E4M3:
    return "|u1"; // its bits, as numpy has no 8-bit float
  }
  return "";
}

bool kiln::npyHolds(const std::string &descr, DType t) {
  // A one-byte type has no byte order: numpy writes `|i1`, a user may write `<i1`.
  std::string d = descr.size() == 3 && descr.compare(1, 2, "i1") == 0 ? "|i1" : descr;
  if (t == DType::BF16)
    return d == "<u2" || d == "<V2" || d == "|V2";
  if (t == DType::F8E4M3) // ml_dtypes.float8_e4m3fn saves as a void byte
    return d == "|u1" || d == "<u1" || d == "|V1" || d == "<V1";
  return d == npyDescr(t);
}

bool kiln::writeNpy(const std::string &path, DType t, const std::vector<int64_t> &shape,
                    const void *data, std::string &error) {
  std::string dims;
  int64_t n = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    dims += (i ? ", " : "") + std::to_string(shape[i]);
    n *= shape[i];
  }
  if (shape.size() == 1)
    dims += ","; // a tuple of one: (7,)
  std::string header = "{'descr': '" + std::string(npyDescr(t)) +
                       "', 'fortran_order': False, 'shape': (" + dims + "), }";
  // Data starts on a multiple of 64 bytes; the header ends with a newline.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::ofstream out(path, std::ios::binary);
  if (!out) {
    error = "cannot write '" + path + "'";
    return false;
  }
  uint16_t len = header.size();
  out.write("\x93NUMPY\x01\x00", 8);
  out.put(len & 0xff).put(len >> 8);
  out << header;
  out.write(static_cast<const char *>(data), n * dtypeBytes(t));
  if (!out) {
    error = "cannot write '" + path + "'";
    return false;
  }
  return true;
}
