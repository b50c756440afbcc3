package dev.cairn;

import java.lang.ref.Reference;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * An immutable input pipeline (tf.data.Dataset): a source (tensors, a range, text, CSV or TFRecord
 * files, a Java generator) and transformations, each returning a new dataset while this one stays
 * usable (close each). Elements are structures of tensors: named components, each with a dtype and
 * a shape whose dims may be -1 ({@link #components()}). Cairn has no string tensors: a byte string
 * (a text line, a record, a CSV string field, a file name) is a UINT8 vector.
 *
 * <pre>{@code
 * try (Dataset src = Dataset.range(ctx, 0, 100);
 *     Dataset squared = src.map("square", (c, e) -> new Tensor[] {Ops.mul(c, e.get(0), e.get(0))});
 *     Dataset batches = squared.shuffle(100, 42).batch(10);   // intermediate datasets: close them too
 *     DatasetIterator it = batches.iterate()) {
 *   for (Element e : it) {
 *     try (e) { use(e.get(0)); }
 *   }
 * }
 * }</pre>
 *
 * <p><b>Callbacks</b> (map, filter, generator, interleave) run on Cairn's worker threads, several
 * at once when {@code numParallelCalls} asks for it: they must be thread-safe. A compiled map or
 * filter (the default) runs only while it is traced, when the pipeline is built, on symbolic
 * tensors; an eager one ({@code compile(false)}) for every element. Their tensor rules are those of
 * a {@link CompiledFunction} body: the inputs are closed after the callback returns and the
 * returned tensors are taken (closed). An exception a callback throws fails that element only: the
 * iterator's next call throws a CairnException naming the transformation and the element
 * ("map 'parse' (element 7): java.lang.IllegalStateException: bad row"), and the call after it
 * continues with the next element. Threads the library starts are attached to the JVM once, as
 * daemons, and detached when they exit. The callback object is held (a JNI global reference)
 * until the last dataset using it is freed.
 */
public final class Dataset extends NativeHandle {
  /** numParallelCalls, cycleLength or a buffer size chosen by Cairn (tf.data.AUTOTUNE). */
  public static final int AUTOTUNE = -1;
  /** {@link #cardinality()} of a dataset that never ends. */
  public static final long INFINITE_CARDINALITY = -1;
  /** {@link #cardinality()} when the count is not known without running it (after filter). */
  public static final long UNKNOWN_CARDINALITY = -2;

  private volatile List<Component> components; // read once

  Dataset(long handle) {
    super(handle, CairnNative::datasetFree);
  }

  // ---- callbacks ----

  /** A map function: the element's tensors in, the new element's tensors out (taken). */
  @FunctionalInterface
  public interface MapFn {
    /**
     * Computes the new element.
     *
     * @param ctx the context to record (compiled) or compute (eager) into
     * @param element the input element (symbolic while tracing); closed after the call
     * @return the new element's tensors, as many as the map's outputs (taken and closed)
     * @throws Exception anything: the element fails with it
     */
    Tensor[] apply(CairnContext ctx, Element element) throws Exception;
  }

  /** A filter predicate: a BOOL scalar tensor, true to keep the element. */
  @FunctionalInterface
  public interface Predicate {
    /**
     * Decides whether to keep the element.
     *
     * @param ctx the context
     * @param element the element (symbolic while tracing); closed after the call
     * @return a BOOL scalar (taken and closed)
     * @throws Exception anything: the element fails with it
     */
    Tensor test(CairnContext ctx, Element element) throws Exception;
  }

  /** A generator (from_generator): element {@code index} of the iteration, or null at the end. */
  @FunctionalInterface
  public interface Generator {
    /**
     * Makes element {@code index} (0, 1, ... within one iteration; one call at a time per
     * iteration). Returning the same element for the same index makes restores exact.
     *
     * @param ctx the context
     * @param index the element's index in this iteration
     * @return the element's tensors in spec order (taken and closed), or null at the end
     * @throws Exception anything: the element fails with it
     */
    Tensor[] next(CairnContext ctx, long index) throws Exception;
  }

  /** An interleave function: the dataset of one input element. */
  @FunctionalInterface
  public interface InterleaveFn {
    /**
     * Makes the inner dataset of an input element.
     *
     * @param ctx the context
     * @param element the input element; closed after the call
     * @return a dataset with the declared spec, which the interleave takes (closes)
     * @throws Exception anything: the element fails with it
     */
    Dataset apply(CairnContext ctx, Element element) throws Exception;
  }

  // ---- element spec ----

  /** One component of an element spec: a name, a dtype and a shape (-1 for an unknown dim). */
  public static final class Component {
    private final String name;
    private final TensorSpec spec;

    private Component(String name, TensorSpec spec) {
      this.name = name;
      this.spec = spec;
    }

    /**
     * A component named {@code name} of {@code dtype} and {@code shape}.
     *
     * @param name the name (unique and non-empty in a spec)
     * @param dtype the dtype
     * @param shape the dims, -1 for any size
     * @return the component
     */
    public static Component of(String name, DType dtype, long... shape) {
      return new Component(Objects.requireNonNull(name, "name"), TensorSpec.of(dtype, shape));
    }

    /**
     * The name.
     *
     * @return the name
     */
    public String name() {
      return name;
    }

    /**
     * The dtype.
     *
     * @return the dtype
     */
    public DType dtype() {
      return spec.dtype();
    }

    /**
     * The dims, -1 where unknown.
     *
     * @return a copy of the dims
     */
    public long[] shape() {
      return spec.shape();
    }

    /**
     * The dtype and shape as a spec.
     *
     * @return the spec
     */
    public TensorSpec spec() {
      return spec;
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof Component && ((Component) o).toString().equals(toString());
    }

    @Override
    public int hashCode() {
      return toString().hashCode();
    }

    /** For example {@code "image: float32[28,28]"}. */
    @Override
    public String toString() {
      return name + ": " + spec;
    }
  }

  // The spec as the raw layer's parallel arrays: names, dtypes, shapes.
  private static final class Specs {
    final byte[][] names;
    final int[] dtypes;
    final long[][] shapes;

    Specs(List<Component> spec) {
      Objects.requireNonNull(spec, "spec");
      int n = spec.size();
      names = new byte[n][];
      dtypes = new int[n];
      shapes = new long[n][];
      for (int i = 0; i < n; ++i) {
        Component c = Objects.requireNonNull(spec.get(i), "spec component");
        names[i] = NativeResources.cstr(c.name);
        dtypes[i] = c.dtype().value();
        shapes[i] = c.shape();
      }
    }
  }

  /**
   * The number of components of each element.
   *
   * @return the count
   */
  public int numComponents() {
    return components().size();
  }

  /**
   * The element spec: the components in order.
   *
   * @return the components (unmodifiable)
   */
  public List<Component> components() {
    List<Component> c = components;
    if (c != null) return c;
    long h = handle();
    try {
      int n = Math.toIntExact(CairnNative.datasetNumComponents(h));
      List<Component> out = new ArrayList<>(n);
      for (int i = 0; i < n; ++i) {
        out.add(new Component(DataNative.componentName(h, i),
            TensorSpec.of(DType.fromValue(DataNative.componentDtype(h, i)), DataNative.componentShape(h, i))));
      }
      c = Collections.unmodifiableList(out);
    } finally {
      Reference.reachabilityFence(this);
    }
    components = c;
    return c;
  }

  /**
   * The component names, in order.
   *
   * @return the names (unmodifiable)
   */
  public List<String> names() {
    List<String> out = new ArrayList<>();
    for (Component c : components()) out.add(c.name());
    return Collections.unmodifiableList(out);
  }

  /**
   * The number of elements: a count, {@link #INFINITE_CARDINALITY} or {@link #UNKNOWN_CARDINALITY}.
   *
   * @return the cardinality
   */
  public long cardinality() {
    long h = handle();
    try {
      return CairnNative.datasetCardinality(h);
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /**
   * The pipeline as text, as errors name it: "range(0, 10, 1).map('f', parallel=4).batch(32)".
   *
   * @return the description
   */
  public String describe() {
    long h = handle();
    try {
      return CairnNative.datasetDescribe(h);
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  @Override
  public String toString() {
    return isClosed() ? "Dataset(closed)" : "Dataset(" + describe() + ")";
  }

  // ---- sources ----

  private interface Source {
    long make(long ctx);
  }

  private static Dataset source(CairnContext ctx, Source s) {
    Objects.requireNonNull(ctx, "ctx");
    long c = ctx.handle();
    try {
      return new Dataset(s.make(c));
    } finally {
      Reference.reachabilityFence(ctx);
    }
  }

  private static byte[][] cstrs(List<String> strings, String what) {
    Objects.requireNonNull(strings, what);
    byte[][] out = new byte[strings.size()][];
    for (int i = 0; i < out.length; ++i) out[i] = NativeResources.cstr(Objects.requireNonNull(strings.get(i), what));
    return out;
  }

  private static List<String> defaultNames(int n) {
    List<String> out = new ArrayList<>(n);
    for (int i = 0; i < n; ++i) out.add(Integer.toString(i));
    return out;
  }

  private static long[] handles(Tensor[] tensors) {
    long[] h = new long[tensors.length];
    for (int i = 0; i < h.length; ++i) h[i] = Objects.requireNonNull(tensors[i], "tensor").handle();
    return h;
  }

  private static Dataset tensors(CairnContext ctx, boolean slices, List<String> names, Tensor[] tensors) {
    byte[][] n = cstrs(names, "names");
    long[] h = handles(tensors);
    try {
      return source(ctx, c -> slices ? CairnNative.datasetFromTensorSlices(c, n, h) : CairnNative.datasetFromTensors(c, n, h));
    } finally {
      Reference.reachabilityFence(tensors);
    }
  }

  /**
   * One element: the tensors, components named by the map's keys in its iteration order (use a
   * LinkedHashMap), as tf.data.Dataset.from_tensors. The dataset keeps its own references.
   *
   * @param ctx the context
   * @param components name to tensor
   * @return the dataset
   */
  public static Dataset fromTensors(CairnContext ctx, Map<String, Tensor> components) {
    return tensors(ctx, false, new ArrayList<>(components.keySet()), components.values().toArray(new Tensor[0]));
  }

  /**
   * One element of the tensors, components named "0", "1", ....
   *
   * @param ctx the context
   * @param tensors the tensors
   * @return the dataset
   */
  public static Dataset fromTensors(CairnContext ctx, Tensor... tensors) {
    return tensors(ctx, false, defaultNames(tensors.length), tensors);
  }

  /**
   * One element per row of the tensors' first dimension (from_tensor_slices), components named by
   * the map's keys in its iteration order. INVALID_ARGUMENT when the first dims differ.
   *
   * @param ctx the context
   * @param components name to tensor (rank at least 1)
   * @return the dataset
   */
  public static Dataset fromTensorSlices(CairnContext ctx, Map<String, Tensor> components) {
    return tensors(ctx, true, new ArrayList<>(components.keySet()), components.values().toArray(new Tensor[0]));
  }

  /**
   * One element per row of the tensors' first dimension, components named "0", "1", ....
   *
   * @param ctx the context
   * @param tensors the tensors (rank at least 1)
   * @return the dataset
   */
  public static Dataset fromTensorSlices(CairnContext ctx, Tensor... tensors) {
    return tensors(ctx, true, defaultNames(tensors.length), tensors);
  }

  /**
   * INT64 scalars start, start + step, ... before stop; one component "value" (Dataset.range).
   *
   * @param ctx the context
   * @param start the first value
   * @param stop the end (excluded)
   * @param step the step (not 0)
   * @return the dataset
   */
  public static Dataset range(CairnContext ctx, long start, long stop, long step) {
    return source(ctx, c -> CairnNative.datasetRange(c, start, stop, step));
  }

  /**
   * {@code range(ctx, start, stop, 1)}.
   *
   * @param ctx the context
   * @param start the first value
   * @param stop the end (excluded)
   * @return the dataset
   */
  public static Dataset range(CairnContext ctx, long start, long stop) {
    return range(ctx, start, stop, 1);
  }

  /**
   * The lines of text files, without line ends: one component "line", a UINT8 vector
   * (TextLineDataset). NOT_FOUND naming the path at the first read.
   *
   * @param ctx the context
   * @param paths the files, read in order
   * @return the dataset
   */
  public static Dataset textLines(CairnContext ctx, String... paths) {
    byte[][] p = cstrs(Arrays.asList(paths), "paths");
    return source(ctx, c -> CairnNative.datasetTextLines(c, p));
  }

  /**
   * The records of CSV files (RFC 4180 quoting), one component per column: a scalar, or a UINT8
   * vector for a STRING column. Errors when read: INVALID_ARGUMENT "&lt;path&gt;:&lt;line&gt;: ...".
   *
   * @param ctx the context
   * @param paths the files
   * @param options the column dtypes and the rest ({@link #csvOptions})
   * @return the dataset
   */
  public static Dataset csv(CairnContext ctx, List<String> paths, CsvOptions options) {
    Objects.requireNonNull(options, "options");
    byte[][] p = cstrs(paths, "paths");
    CsvOptions o = options;
    return source(ctx, c -> DataNative.csv(c, p, o.dtypes, o.defaults, o.names, o.select, o.set, o.header ? 1 : 0,
        o.delimiter, NativeResources.cstr(o.naValue)));
  }

  /**
   * The file names matching glob patterns, one component "filename" (a UINT8 vector): sorted, then
   * a seeded permutation when {@code shuffle} (Dataset.list_files). NOT_FOUND when nothing matches.
   *
   * @param ctx the context
   * @param patterns the glob patterns
   * @param shuffle whether to shuffle (each pass of a repeat reshuffles)
   * @param seed the shuffle's seed
   * @return the dataset
   */
  public static Dataset listFiles(CairnContext ctx, List<String> patterns, boolean shuffle, long seed) {
    byte[][] p = cstrs(patterns, "patterns");
    return source(ctx, c -> CairnNative.datasetListFiles(c, p, shuffle ? 1 : 0, seed));
  }

  /**
   * The records of TFRecord files: one component "record", a UINT8 vector (TFRecordDataset).
   * Uncompressed files are indexable (the position is an index); compressed ones are streams.
   *
   * @param ctx the context
   * @param paths the files
   * @param options the options (null: the defaults)
   * @return the dataset
   */
  public static Dataset tfrecord(CairnContext ctx, List<String> paths, TfRecordOptions options) {
    byte[][] p = cstrs(paths, "paths");
    TfRecordOptions o = options == null ? new TfRecordOptions() : options;
    return source(ctx, c -> CairnNative.datasetTfrecord(c, p, o.set, o.compression.value(), o.numParallelReads,
        o.bufferSize));
  }

  /**
   * Elements from a Java generator with a declared spec (from_generator); each element is checked
   * against it. The generator is called on a worker thread, one call at a time per iteration.
   *
   * @param ctx the context
   * @param spec the components
   * @param generator element {@code index}, or null at the end
   * @return the dataset
   */
  public static Dataset fromGenerator(CairnContext ctx, List<Component> spec, Generator generator) {
    Objects.requireNonNull(generator, "generator");
    Specs s = new Specs(spec);
    DatasetCallback cb = DatasetCallback.generator("generator", spec.size(), generator);
    return source(ctx, c -> DataNative.fromGenerator(c, s.names, s.dtypes, s.shapes, cb));
  }

  // ---- transformations ----

  private interface Transform {
    long make(long in);
  }

  private Dataset derive(Transform t) {
    long h = handle();
    try {
      return new Dataset(t.make(h));
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /**
   * Applies {@code fn} to every element (Dataset.map) with the default options: compiled (traced
   * here, once), one output named "0", one element at a time.
   *
   * @param name names the map in errors and descriptions
   * @param fn the function
   * @return the dataset
   */
  public Dataset map(String name, MapFn fn) {
    return map(name, fn, null);
  }

  /**
   * Applies {@code fn} to every element (Dataset.map). Its inputs are the element's components in
   * order ({@link Element} gives them by name too), its outputs the new element's.
   *
   * @param name names the map in errors and descriptions ("map 'name' (element 17): ...")
   * @param fn the function, called from worker threads
   * @param options the options (null: the defaults)
   * @return the dataset
   */
  public Dataset map(String name, MapFn fn, MapOptions options) {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(fn, "fn");
    MapOptions o = options == null ? new MapOptions() : options;
    int n = o.numOutputs();
    Specs specs = o.specs == null ? null : new Specs(o.specs);
    byte[][] outNames = o.specs != null ? specs.names : o.names == null ? null : cstrs(o.names, "outputs");
    DatasetCallback cb = DatasetCallback.map("map '" + name + "'", names(), n, fn);
    return derive(in -> DataNative.map(in, NativeResources.cstr(name), cb, o.set, o.numParallelCalls,
        o.deterministic, o.compile, outNames, specs == null ? null : specs.dtypes, specs == null ? null : specs.shapes,
        n, o.seed));
  }

  /**
   * Keeps the elements for which {@code fn} gives true (Dataset.filter); the result is a stream
   * (unknown cardinality).
   *
   * @param name names the filter in errors
   * @param fn the predicate (a BOOL scalar), called from worker threads
   * @param options the options (null: the defaults: compiled)
   * @return the dataset
   */
  public Dataset filter(String name, Predicate fn, FilterOptions options) {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(fn, "fn");
    FilterOptions o = options == null ? new FilterOptions() : options;
    DatasetCallback cb = DatasetCallback.filter("filter '" + name + "'", names(), fn);
    return derive(in -> DataNative.filter(in, NativeResources.cstr(name), cb, o.set, o.compile, o.seed));
  }

  /**
   * {@code filter(name, fn, null)}.
   *
   * @param name names the filter in errors
   * @param fn the predicate
   * @return the dataset
   */
  public Dataset filter(String name, Predicate fn) {
    return filter(name, fn, null);
  }

  /**
   * Stacks {@code batchSize} consecutive elements (Dataset.batch); the last batch is smaller
   * unless {@code dropRemainder}.
   *
   * @param batchSize elements per batch (at least 1)
   * @param dropRemainder drop a last, smaller batch
   * @return the dataset
   */
  public Dataset batch(long batchSize, boolean dropRemainder) {
    return derive(in -> CairnNative.datasetBatch(in, batchSize, dropRemainder ? 1 : 0));
  }

  /**
   * {@code batch(batchSize, false)}.
   *
   * @param batchSize elements per batch
   * @return the dataset
   */
  public Dataset batch(long batchSize) {
    return batch(batchSize, false);
  }

  /**
   * Batches elements of different shapes by padding (Dataset.padded_batch).
   *
   * @param batchSize elements per batch
   * @param dropRemainder drop a last, smaller batch
   * @param paddedShapes null (every dim to the batch's largest), or one shape per component (-1:
   *     the batch's largest, else that size)
   * @param paddingValues null (zeros), or one scalar per component (a null entry: zero); borrowed
   * @return the dataset
   */
  public Dataset paddedBatch(long batchSize, boolean dropRemainder, List<long[]> paddedShapes,
      List<Tensor> paddingValues) {
    int[] dtypes = null;
    long[][] shapes = null;
    if (paddedShapes != null) {
      shapes = paddedShapes.toArray(new long[0][]);
      dtypes = new int[shapes.length];
      Arrays.fill(dtypes, DType.FLOAT32.value()); // ignored by the library
    }
    long[] values = null;
    if (paddingValues != null) {
      values = new long[paddingValues.size()];
      for (int i = 0; i < values.length; ++i) values[i] = paddingValues.get(i) == null ? 0 : paddingValues.get(i).handle();
    }
    int[] d = dtypes;
    long[][] s = shapes;
    long[] v = values;
    try {
      return derive(in -> DataNative.paddedBatch(in, batchSize, dropRemainder, d, s, v));
    } finally {
      Reference.reachabilityFence(paddingValues);
    }
  }

  /**
   * Splits each element along its first dimension (Dataset.unbatch).
   *
   * @return the dataset
   */
  public Dataset unbatch() {
    return derive(CairnNative::datasetUnbatch);
  }

  /**
   * Shuffles (Dataset.shuffle): over an indexable input a seeded permutation of all of it, over a
   * stream a buffer of {@code bufferSize} elements.
   *
   * @param bufferSize the buffer size (at least 1)
   * @param seed the seed
   * @param reshuffleEachIteration a new order for each pass of a repeat and each iterator
   * @return the dataset
   */
  public Dataset shuffle(long bufferSize, long seed, boolean reshuffleEachIteration) {
    return derive(in -> CairnNative.datasetShuffle(in, bufferSize, seed, reshuffleEachIteration ? 1 : 0));
  }

  /**
   * {@code shuffle(bufferSize, seed, true)}, TensorFlow's default.
   *
   * @param bufferSize the buffer size
   * @param seed the seed
   * @return the dataset
   */
  public Dataset shuffle(long bufferSize, long seed) {
    return shuffle(bufferSize, seed, true);
  }

  /**
   * The input {@code count} times; -1 forever (Dataset.repeat).
   *
   * @param count the number of passes
   * @return the dataset
   */
  public Dataset repeat(long count) {
    return derive(in -> CairnNative.datasetRepeat(in, count));
  }

  /**
   * The input forever.
   *
   * @return the dataset
   */
  public Dataset repeat() {
    return repeat(-1);
  }

  /**
   * The first {@code count} elements; -1 all (Dataset.take).
   *
   * @param count the number of elements
   * @return the dataset
   */
  public Dataset take(long count) {
    return derive(in -> CairnNative.datasetTake(in, count));
  }

  /**
   * All but the first {@code count} elements; -1 skips all (Dataset.skip).
   *
   * @param count the number of elements
   * @return the dataset
   */
  public Dataset skip(long count) {
    return derive(in -> CairnNative.datasetSkip(in, count));
  }

  /**
   * Every {@code numShards}-th element starting at {@code index} (Dataset.shard).
   *
   * @param numShards the number of shards
   * @param index this shard, in [0, numShards)
   * @return the dataset
   */
  public Dataset shard(long numShards, long index) {
    return derive(in -> CairnNative.datasetShard(in, numShards, index));
  }

  /**
   * Maps each element to a dataset and interleaves their elements (Dataset.interleave):
   * cycleLength inner datasets at a time, blockLength elements from each in turn.
   *
   * @param fn the inner dataset of an element (taken), called from worker threads
   * @param spec the inner datasets' element spec
   * @param options the options (null: the defaults)
   * @return the dataset
   */
  public Dataset interleave(InterleaveFn fn, List<Component> spec, InterleaveOptions options) {
    Objects.requireNonNull(fn, "fn");
    Specs s = new Specs(spec);
    InterleaveOptions o = options == null ? new InterleaveOptions() : options;
    DatasetCallback cb = DatasetCallback.interleave("interleave", names(), fn);
    return derive(in -> DataNative.interleave(in, cb, s.names, s.dtypes, s.shapes, o.set, o.cycleLength,
        o.blockLength, o.numParallelCalls, o.deterministic));
  }

  /**
   * Computes up to {@code bufferSize} elements ahead on a background thread (Dataset.prefetch).
   * {@link #AUTOTUNE} picks the size, and over an indexable pipeline also computes elements on every
   * CPU (the functions of its maps must then tolerate concurrent calls).
   *
   * @param bufferSize the buffer size, or {@link #AUTOTUNE}
   * @return the dataset
   */
  public Dataset prefetch(long bufferSize) {
    return derive(in -> CairnNative.datasetPrefetch(in, bufferSize));
  }

  /**
   * Prefetches and copies every component to {@code device} ("cpu", "vulkan:0").
   *
   * @param device the device
   * @param bufferSize the buffer size, or {@link #AUTOTUNE}
   * @return the dataset
   */
  public Dataset prefetchToDevice(String device, long bufferSize) {
    byte[] d = NativeResources.cstr(Objects.requireNonNull(device, "device"));
    return derive(in -> CairnNative.datasetPrefetchToDevice(in, d, bufferSize));
  }

  /**
   * Caches the elements (Dataset.cache): in memory when {@code filename} is null or "", else in
   * that file (complete once the first full pass ends).
   *
   * @param filename the cache file, or null for memory
   * @return the dataset
   */
  public Dataset cache(String filename) {
    byte[] f = NativeResources.cstr(filename);
    return derive(in -> CairnNative.datasetCache(in, f));
  }

  /**
   * The elements of the datasets side by side (Dataset.zip): their components in order; it ends
   * with the shortest. Component names must differ (rename with {@link #select(List, List)}).
   *
   * @param datasets the inputs (at least one)
   * @return the dataset
   */
  public static Dataset zip(Dataset... datasets) {
    long[] h = new long[datasets.length];
    for (int i = 0; i < h.length; ++i) h[i] = Objects.requireNonNull(datasets[i], "dataset").handle();
    try {
      return new Dataset(CairnNative.datasetZip(h));
    } finally {
      Reference.reachabilityFence(datasets);
    }
  }

  /**
   * The elements of this dataset, then those of {@code other} (Dataset.concatenate); the specs
   * must agree in names, dtypes and ranks.
   *
   * @param other the dataset that follows
   * @return the dataset
   */
  public Dataset concatenate(Dataset other) {
    long o = Objects.requireNonNull(other, "other").handle();
    try {
      return derive(in -> CairnNative.datasetConcatenate(in, o));
    } finally {
      Reference.reachabilityFence(other);
    }
  }

  /**
   * Prepends an INT64 scalar component "index" counting from {@code start} (Dataset.enumerate).
   *
   * @param start the first index
   * @return the dataset
   */
  public Dataset enumerate(long start) {
    return derive(in -> CairnNative.datasetEnumerate(in, start));
  }

  /**
   * {@code enumerate(0)}.
   *
   * @return the dataset
   */
  public Dataset enumerate() {
    return enumerate(0);
  }

  /**
   * Keeps the components {@code names}, in that order.
   *
   * @param names the components to keep
   * @return the dataset
   */
  public Dataset select(String... names) {
    return select(Arrays.asList(names), null);
  }

  /**
   * Keeps the components {@code names}, in that order, renamed to {@code newNames} (null: same).
   *
   * @param names the components to keep
   * @param newNames their new names, or null
   * @return the dataset
   */
  public Dataset select(List<String> names, List<String> newNames) {
    byte[][] n = cstrs(names, "names");
    byte[][] nn = newNames == null ? n : cstrs(newNames, "newNames");
    return derive(in -> CairnNative.datasetSelect(in, n, nn));
  }

  /**
   * Parses the serialized tf.train.Example in {@code component} (a UINT8 vector, as a TFRecord
   * source gives) with FIXED_LEN or VAR_LEN specs; the component is replaced by the parsed outputs,
   * named "&lt;key&gt;" (FIXED_LEN) or "&lt;key&gt;/indices", "&lt;key&gt;/values" (VAR_LEN).
   *
   * @param component the component holding the records
   * @param specs the feature specs
   * @return the dataset
   */
  public Dataset parseExample(String component, FeatureSpec... specs) {
    byte[] c = NativeResources.cstr(Objects.requireNonNull(component, "component"));
    FeatureSpec.Marshalled m = new FeatureSpec.Marshalled(specs);
    try {
      return derive(in -> IoNative.datasetParseExample(in, c, m.keys, m.kinds, m.dtypes, m.shapes, m.defaults));
    } finally {
      Reference.reachabilityFence(specs);
    }
  }

  /**
   * A new iterator from the first element; a tracked object (put it in a checkpoint).
   *
   * @return the iterator, which the caller closes
   */
  public DatasetIterator iterate() {
    long h = handle();
    try {
      return new DatasetIterator(CairnNative.datasetIterate(h));
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  // ---- options ----

  /**
   * Options of {@link #csv}: one dtype per output column (FLOAT32, FLOAT64, INT32, INT64, or
   * STRING for the field's bytes as a UINT8 vector); the rest start at the C defaults.
   *
   * @param columnDtypes the columns' dtypes
   * @return new options
   */
  public static CsvOptions csvOptions(DType... columnDtypes) {
    return new CsvOptions(columnDtypes);
  }

  /** The options of cairn_dataset_csv. Not thread-safe to mutate. */
  public static final class CsvOptions {
    private final int[] dtypes;
    private byte[][] defaults;
    private byte[][] names;
    private long[] select;
    private long set;
    private boolean header;
    private int delimiter;
    private String naValue;

    private CsvOptions(DType[] columnDtypes) {
      Objects.requireNonNull(columnDtypes, "columnDtypes");
      dtypes = new int[columnDtypes.length];
      for (int i = 0; i < dtypes.length; ++i) dtypes[i] = Objects.requireNonNull(columnDtypes[i], "dtype").value();
    }

    /**
     * The text an empty (or naValue) field takes, one per column; a null entry makes the column
     * required. Default: every column required.
     *
     * @param values the defaults
     * @return these options
     */
    public CsvOptions columnDefaults(String... values) {
      defaults = new byte[values.length][];
      for (int i = 0; i < values.length; ++i) defaults[i] = NativeResources.cstr(values[i]);
      return this;
    }

    /**
     * The component names, one per column. Default: the header's names with {@link #header}, else
     * "0", "1", ....
     *
     * @param columnNames the names
     * @return these options
     */
    public CsvOptions columnNames(String... columnNames) {
      names = cstrs(Arrays.asList(columnNames), "columnNames");
      return this;
    }

    /**
     * Reads only these file columns (increasing indexes, one per dtype). Default: all.
     *
     * @param columns the column indexes
     * @return these options
     */
    public CsvOptions selectColumns(long... columns) {
      select = columns.clone();
      return this;
    }

    /**
     * Skips each file's first line and takes the names from it. Default false.
     *
     * @param header whether the files have a header line
     * @return these options
     */
    public CsvOptions header(boolean header) {
      this.header = header;
      set |= 1;
      return this;
    }

    /**
     * The field separator, one ASCII character. Default ','.
     *
     * @param delimiter the separator
     * @return these options
     */
    public CsvOptions delimiter(char delimiter) {
      if (delimiter > 127) throw new IllegalArgumentException("delimiter must be ASCII, got " + delimiter);
      this.delimiter = delimiter;
      set |= 2;
      return this;
    }

    /**
     * A field text that counts as missing. Default: none (only empty fields).
     *
     * @param naValue the text
     * @return these options
     */
    public CsvOptions naValue(String naValue) {
      this.naValue = naValue;
      return this;
    }
  }

  /**
   * Options of {@link #tfrecord}, each at the C default.
   *
   * @return new options
   */
  public static TfRecordOptions tfrecordOptions() {
    return new TfRecordOptions();
  }

  /** The options of cairn_dataset_tfrecord. Not thread-safe to mutate. */
  public static final class TfRecordOptions {
    private long set;
    private Compression compression = Compression.NONE;
    private int numParallelReads;
    private long bufferSize;

    private TfRecordOptions() {}

    /**
     * The files' compression. Default NONE.
     *
     * @param compression the compression
     * @return these options
     */
    public TfRecordOptions compression(Compression compression) {
      this.compression = Objects.requireNonNull(compression, "compression");
      set |= CairnNative.TFRECORD_OPTIONS_COMPRESSION;
      return this;
    }

    /**
     * Files read at once, interleaved one record each; 0 (default) one after another; or
     * {@link Dataset#AUTOTUNE}.
     *
     * @param n the number of files
     * @return these options
     */
    public TfRecordOptions numParallelReads(int n) {
      numParallelReads = n;
      set |= CairnNative.TFRECORD_OPTIONS_NUM_PARALLEL_READS;
      return this;
    }

    /**
     * Bytes per read. Default 0 (1 MiB).
     *
     * @param bytes the size
     * @return these options
     */
    public TfRecordOptions bufferSize(long bytes) {
      bufferSize = bytes;
      set |= CairnNative.TFRECORD_OPTIONS_BUFFER_SIZE;
      return this;
    }
  }

  /**
   * Options of {@link #map}, each at the C default.
   *
   * @return new options
   */
  public static MapOptions mapOptions() {
    return new MapOptions();
  }

  /** The options of cairn_dataset_map. Not thread-safe to mutate. */
  public static final class MapOptions {
    private long set;
    private int numParallelCalls;
    private boolean deterministic = true;
    private boolean compile = true;
    private List<String> names;
    private List<Component> specs;
    private int numOutputs = 1;
    private long seed;

    private MapOptions() {}

    int numOutputs() {
      return specs != null ? specs.size() : names != null ? names.size() : numOutputs;
    }

    /**
     * Elements mapped at once on worker threads: 0 (default) one at a time, N, or {@link
     * Dataset#AUTOTUNE}.
     *
     * @param n the parallelism
     * @return these options
     */
    public MapOptions numParallelCalls(int n) {
      numParallelCalls = n;
      set |= 1;
      return this;
    }

    /**
     * Deliver in input order. Default true.
     *
     * @param deterministic whether to keep the order
     * @return these options
     */
    public MapOptions deterministic(boolean deterministic) {
      this.deterministic = deterministic;
      set |= 2;
      return this;
    }

    /**
     * True (default): trace the function once per element spec, when the pipeline is built, and
     * replay the graph; false: call it eagerly for every element (then {@link #outputSpecs} is
     * required).
     *
     * @param compile whether to compile
     * @return these options
     */
    public MapOptions compile(boolean compile) {
      this.compile = compile;
      set |= 4;
      return this;
    }

    /**
     * The output components' names (their number is the function's output count). Default: one
     * output, "0".
     *
     * @param outputNames the names
     * @return these options
     */
    public MapOptions outputs(String... outputNames) {
      names = Arrays.asList(outputNames.clone());
      return this;
    }

    /**
     * How many tensors the function returns, named "0", "1", ... (default 1). {@link #outputs} and
     * {@link #outputSpecs} set it too.
     *
     * @param n the output count
     * @return these options
     */
    public MapOptions numOutputs(int n) {
      numOutputs = n;
      return this;
    }

    /**
     * The outputs' names and specs: required when not compiled; with compile, the trace gives
     * them by default.
     *
     * @param outputSpecs the outputs
     * @return these options
     */
    public MapOptions outputSpecs(Component... outputSpecs) {
      specs = Arrays.asList(outputSpecs.clone());
      return this;
    }

    /**
     * Key of the function's random ops with seed 0. Default 0 (the context's seed).
     *
     * @param seed the seed
     * @return these options
     */
    public MapOptions seed(long seed) {
      this.seed = seed;
      set |= 8;
      return this;
    }
  }

  /**
   * Options of {@link #filter}, each at the C default.
   *
   * @return new options
   */
  public static FilterOptions filterOptions() {
    return new FilterOptions();
  }

  /** The options of cairn_dataset_filter. Not thread-safe to mutate. */
  public static final class FilterOptions {
    private long set;
    private boolean compile = true;
    private long seed;

    private FilterOptions() {}

    /**
     * As {@link MapOptions#compile}. Default true.
     *
     * @param compile whether to compile
     * @return these options
     */
    public FilterOptions compile(boolean compile) {
      this.compile = compile;
      set |= 1;
      return this;
    }

    /**
     * As {@link MapOptions#seed}. Default 0.
     *
     * @param seed the seed
     * @return these options
     */
    public FilterOptions seed(long seed) {
      this.seed = seed;
      set |= 2;
      return this;
    }
  }

  /**
   * Options of {@link #interleave}, each at the C default.
   *
   * @return new options
   */
  public static InterleaveOptions interleaveOptions() {
    return new InterleaveOptions();
  }

  /** The options of cairn_dataset_interleave. Not thread-safe to mutate. */
  public static final class InterleaveOptions {
    private long set;
    private int cycleLength;
    private int blockLength;
    private int numParallelCalls;
    private boolean deterministic = true;

    private InterleaveOptions() {}

    /**
     * Inner datasets open at once. Default {@link Dataset#AUTOTUNE} (the CPUs).
     *
     * @param n the cycle length
     * @return these options
     */
    public InterleaveOptions cycleLength(int n) {
      cycleLength = n;
      set |= 1;
      return this;
    }

    /**
     * Consecutive elements from each before moving on. Default 1.
     *
     * @param n the block length
     * @return these options
     */
    public InterleaveOptions blockLength(int n) {
      blockLength = n;
      set |= 2;
      return this;
    }

    /**
     * Inner datasets read ahead in parallel. Default 0 (none).
     *
     * @param n the parallelism
     * @return these options
     */
    public InterleaveOptions numParallelCalls(int n) {
      numParallelCalls = n;
      set |= 4;
      return this;
    }

    /**
     * The fixed round-robin order. Default true.
     *
     * @param deterministic whether to keep the order
     * @return these options
     */
    public InterleaveOptions deterministic(boolean deterministic) {
      this.deterministic = deterministic;
      set |= 8;
      return this;
    }
  }
}
