// The checkpoint file format: layout constants, the in-memory object graph and metadata, and the
// pieces of encoding shared by the writer, the reader and the tools (design/CHECKPOINT.md).
//
// File layout, little-endian throughout:
//   [header: 64 bytes]
//      0  magic "CAIRNCKP"          8 bytes
//      8  format version            u32
//     12  flags                     u32 (no flag is defined yet; a reader refuses unknown flags)
//     16  header size (64)          u32
//     20  payload alignment (64)    u32
//     24  reserved, zero            32 bytes
//     56  XXH3-64 of bytes 0..55    u64
//   [payloads: each starts at a multiple of 64; padding is zero]
//   [index: a FlatBuffer (schemas/checkpoint.fbs, identifier "CAIR"), starting at a multiple of 64]
//   [footer: 40 bytes]
//      0  index offset              u64
//      8  index size                u64
//     16  XXH3-64 of the index      u64
//     24  format version            u32
//     28  reserved, zero            u32
//     32  magic "CAIRNEND"          8 bytes
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/core/dtype.h"
#include "runtime/core/shape.h"

namespace cairn::ckpt {

constexpr uint32_t kFormatVersion = 1;       // what this library writes
constexpr uint32_t kMinFormatVersion = 1;    // the oldest version it reads
constexpr size_t kHeaderSize = 64;
constexpr size_t kFooterSize = 40;
constexpr size_t kPayloadAlignment = 64;
constexpr char kHeaderMagic[8] = {'C', 'A', 'I', 'R', 'N', 'C', 'K', 'P'};
constexpr char kFooterMagic[8] = {'C', 'A', 'I', 'R', 'N', 'E', 'N', 'D'};
constexpr const char* kObjectGraphIdentifier = "CAOG";  // buffer identifier of the graph entry
// ZSTD_SHUFFLE shuffles the raw bytes in blocks of this size (the last block is shorter).
constexpr size_t kShuffleBlockBytes = size_t{1} << 20;
// No zstd frame decodes to more than this many times its size (a 4-byte block per 128 KiB), so
// a compressed entry claiming more is refused before anything is allocated.
constexpr uint64_t kMaxZstdExpansion = 32768;

// Fuzzing builds (tests/fuzz/run_fuzzer.sh defines FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION)
// ignore checksum mismatches so the fuzzer reaches the parsers behind them. Never set elsewhere.
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
constexpr bool kEnforceChecksums = false;
#else
constexpr bool kEnforceChecksums = true;
#endif

// The key of the string scalar holding the serialized object graph (as in TensorFlow).
constexpr std::string_view kObjectGraphKey = "_CHECKPOINTABLE_OBJECT_GRAPH";

enum class Codec : uint8_t { None = 0, Zstd = 1, ZstdShuffle = 2 };
const char* codec_name(Codec c);  // "none", "zstd", "zstd+shuffle"; "invalid" otherwise


struct ChildEdge {
  std::string name;
  uint32_t node_id = 0;
  bool operator==(const ChildEdge& o) const { return name == o.name && node_id == o.node_id; }
};

// A value saved for an object; `key` names the checkpoint entry holding it.
struct Attribute {
  std::string name;  // "VARIABLE_VALUE"
  std::string key;   // "net/l1/kernel/.ATTRIBUTES/VARIABLE_VALUE"
  bool operator==(const Attribute& o) const { return name == o.name && key == o.key; }
};

struct SlotRef {
  uint32_t optimizer_node = 0;
  uint32_t variable_node = 0;
  std::string slot_name;
  uint32_t slot_node = 0;
  bool operator==(const SlotRef& o) const {
    return optimizer_node == o.optimizer_node && variable_node == o.variable_node &&
           slot_name == o.slot_name && slot_node == o.slot_node;
  }
};

struct Node {
  uint32_t kind = 0;  // an ObjectKind value (runtime/core/object_kind.h); unknown values are kept
  std::vector<ChildEdge> children;
  std::vector<Attribute> attributes;
  std::vector<SlotRef> slots;
  bool operator==(const Node& o) const {
    return kind == o.kind && children == o.children && attributes == o.attributes && slots == o.slots;
  }
};

// The saved object graph; nodes[0] is the root. Node ids are indices into `nodes`.
struct ObjectGraph {
  std::vector<Node> nodes;
  bool operator==(const ObjectGraph& o) const { return nodes == o.nodes; }
};

struct Metadata {
  int64_t save_counter = 0;
  std::string library_version;
  std::map<std::string, std::string> user;  // ordered, so the bytes are deterministic
  bool operator==(const Metadata& o) const {
    return save_counter == o.save_counter && library_version == o.library_version && user == o.user;
  }
};

// One entry of a checkpoint's index as the reader validated it.
struct TensorInfo {
  std::string key;
  DType dtype = DType::Invalid;  // DType::String for string scalars
  Shape shape;
  uint64_t offset = 0;       // absolute file offset of the payload
  uint64_t stored_size = 0;  // bytes in the file
  uint64_t raw_size = 0;     // bytes once decoded
  Codec codec = Codec::None;
  uint64_t checksum = 0;      // XXH3-64 of the stored bytes
  uint64_t raw_checksum = 0;  // XXH3-64 of the decoded bytes
};

// Parses the bytes of a _CHECKPOINTABLE_OBJECT_GRAPH entry (a FlatBuffer with root table
// ObjectGraph, identifier "CAOG"; the writer makes them from the graph it is given). Verifies the
// buffer and every node id; raises DataLoss naming `what` when the bytes are not a valid graph.
ObjectGraph parse_object_graph(std::string_view bytes, std::string_view what = "object graph");

// Checks node ids in range; raises InvalidArgument naming `what` otherwise.
void validate_object_graph(const ObjectGraph& graph, std::string_view what);

// Header and footer encoding. decode_* raise DataLoss/InvalidArgument naming `path`.
struct Header {
  uint32_t format_version = kFormatVersion;
  uint32_t flags = 0;
};
struct Footer {
  uint64_t index_offset = 0;
  uint64_t index_size = 0;
  uint64_t index_checksum = 0;
  uint32_t format_version = kFormatVersion;
};
void encode_header(const Header& h, uint8_t out[kHeaderSize]);
void encode_footer(const Footer& f, uint8_t out[kFooterSize]);
Header decode_header(const uint8_t in[kHeaderSize], std::string_view path);
Footer decode_footer(const uint8_t in[kFooterSize], std::string_view path);

// XXH3-64 with seed 0, the checksum used everywhere in the format.
uint64_t checksum(const void* data, size_t size);

// Byte shuffle of `size` bytes (a multiple of `width`) from `src` to `dst` and back. The two
// ranges must not overlap. ZSTD_SHUFFLE applies this to each kShuffleBlockBytes block.
void shuffle_bytes(const uint8_t* src, uint8_t* dst, size_t size, size_t width);
void unshuffle_bytes(const uint8_t* src, uint8_t* dst, size_t size, size_t width);

// Little-endian scalar access (the format is little-endian on every host).
inline void store_le32(uint8_t* p, uint32_t v) { for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i)); }
inline void store_le64(uint8_t* p, uint64_t v) { for (int i = 0; i < 8; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i)); }
inline uint32_t load_le32(const uint8_t* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(p[i]) << (8 * i);
  return v;
}
inline uint64_t load_le64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}

}  // namespace cairn::ckpt
