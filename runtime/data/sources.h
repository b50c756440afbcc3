// The sources of tf.data pipelines: tensors, ranges, text lines, CSV, file lists, TFRecord files and
// host generators. Byte strings (a line, a file name, a record, a CSV string field) are uint8
// vectors. Every source but the generator and compressed TFRecord files is indexable.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "runtime/data/dataset.h"
#include "runtime/io/record.h"

namespace cairn::data {

// One element: the tensors themselves (tf.data.Dataset.from_tensors). `names` unique, non-empty,
// one per value.
DatasetPtr from_tensors(Context& ctx, std::vector<std::string> names, Element values);
// One element per row of the values' first dimension (from_tensor_slices); all of rank >= 1 with
// the same first dimension.
DatasetPtr from_tensor_slices(Context& ctx, std::vector<std::string> names, Element values);
// int64 scalars start, start + step, ... before stop; one component "value". step != 0.
DatasetPtr range(Context& ctx, int64_t start, int64_t stop, int64_t step);

// The lines of the files, without "\n" or "\r\n"; one component "line". Each file's line offsets
// are found the first time the dataset's size or one of its lines is needed.
DatasetPtr text_lines(Context& ctx, std::vector<std::string> paths);

struct CsvOptions {
  // One per output column: Float32, Float64, Int32, Int64, or String (the field's bytes as a uint8 vector).
  std::vector<DType> column_dtypes;
  // Empty, or one per output column: the text an empty or na_value field takes; nullopt = required.
  std::vector<std::optional<std::string>> column_defaults;
  // Empty: the header's names when `header`, else "0", "1", ...; or one per output column.
  std::vector<std::string> column_names;
  // Empty: every column of the file; or one increasing file column index per output column.
  std::vector<int64_t> select_columns;
  bool header = false;
  char delimiter = ',';
  std::optional<std::string> na_value;
};
// Records of CSV files (RFC 4180), one component per column.
DatasetPtr csv(Context& ctx, std::vector<std::string> paths, CsvOptions options);

// The names of the files matching glob patterns, sorted (duplicates removed); with `shuffle` a
// seeded permutation per iteration. One component "filename". NotFound when nothing matches.
DatasetPtr list_files(Context& ctx, std::vector<std::string> patterns, bool shuffle, int64_t seed);

struct TfRecordOptions {
  io::Compression compression = io::Compression::None;
  int num_parallel_reads = 0;  // 0: the files one after another; N: N files at once, one record each in turn
  uint64_t buffer_size = 0;    // bytes per read; 0: 1 MiB
};
// The records of TFRecord files; one component "record".
DatasetPtr tfrecord(Context& ctx, std::vector<std::string> paths, TfRecordOptions options);

// Sets `out` to element `index` (0, 1, ... within one iteration) and returns true, or returns false
// at the end; throws on error. Called one call at a time per iterator.
using GeneratorFn = std::function<bool(int64_t index, Element& out)>;
// A stream of the generator's elements, each checked against `spec`. State: the next index.
DatasetPtr from_generator(Context& ctx, ElementSpec spec, GeneratorFn fn);

// A uint8 vector holding `bytes` (how byte strings travel through pipelines).
Tensor byte_vector(Context& ctx, std::string_view bytes);

// Throws InvalidArgument "<fn>: ..." unless `names` are non-empty and unique.
void check_component_names(const std::vector<std::string>& names, std::string_view fn);

}  // namespace cairn::data
