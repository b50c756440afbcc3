package dev.cairn;

import java.lang.ref.Reference;
import java.util.Iterator;
import java.util.NoSuchElementException;
import java.util.Objects;

/**
 * A TFRecord file being read (tf.data.TFRecordDataset); cairn_record_reader. Use it from one
 * thread at a time.
 *
 * <p>{@link #next()} returns each record's bytes, and null at the end of the file or at a last
 * record still being written: {@link #partial()} tells the two apart, and a later {@link #next()}
 * resumes at the same offset once the writer has written the rest. A reader is also an {@link
 * Iterable} over the records from where it stands; the iteration stops at null (check {@link
 * #partial()} afterwards), and a corrupt record throws {@link CairnException} DATA_LOSS naming the
 * path and the byte offset from {@code hasNext()}.
 *
 * <pre>{@code
 * try (RecordReader r = RecordReader.open("data.tfrecord")) {
 *   for (byte[] record : r) use(record);
 * }
 * }</pre>
 */
public final class RecordReader extends NativeHandle implements Iterable<byte[]> {
  private RecordReader(long handle) {
    super(handle, CairnNative::recordReaderFree);
  }

  /**
   * Opens the record file {@code path} with the default options.
   *
   * @param path the file
   * @return the reader, at the first record
   */
  public static RecordReader open(String path) {
    return open(path, null);
  }

  /**
   * Opens the record file {@code path}.
   *
   * @param path the file
   * @param options the options; null for the defaults
   * @return the reader, at the first record
   * @throws CairnException NOT_FOUND / PERMISSION_DENIED naming the path
   */
  public static RecordReader open(String path, Options options) {
    Objects.requireNonNull(path, "path");
    Options o = options == null ? new Options() : options;
    NativeLibrary.check();
    return new RecordReader(CairnNative.recordReaderOpen(NativeResources.cstr(path), o.set, o.compression.value(),
        o.verifyChecksums ? 1 : 0, o.readAhead ? 1 : 0, o.bufferSize));
  }

  /**
   * New default options.
   *
   * @return options with every field at its default
   */
  public static Options options() {
    return new Options();
  }

  /**
   * Options of {@link #open(String, Options)} and the whole-file functions
   * (cairn_record_reader_options); unset fields keep their defaults.
   */
  public static final class Options {
    private long set;
    private Compression compression = Compression.NONE;
    private boolean verifyChecksums = true;
    private boolean readAhead = true;
    private long bufferSize;

    /** Default options. */
    public Options() {}

    /**
     * The file's compression (default NONE); it must match the file.
     *
     * @param compression NONE, ZLIB or GZIP
     * @return this
     */
    public Options compression(Compression compression) {
      this.compression = Objects.requireNonNull(compression, "compression");
      set |= CairnNative.RECORD_READER_OPTIONS_COMPRESSION;
      return this;
    }

    /**
     * Check both CRCs of every record (default true).
     *
     * @param verify whether to check them
     * @return this
     */
    public Options verifyChecksums(boolean verify) {
      this.verifyChecksums = verify;
      set |= CairnNative.RECORD_READER_OPTIONS_VERIFY_CHECKSUMS;
      return this;
    }

    /**
     * Read ahead on a background thread in large uncompressed files (default true).
     *
     * @param readAhead whether to read ahead
     * @return this
     */
    public Options readAhead(boolean readAhead) {
      this.readAhead = readAhead;
      set |= CairnNative.RECORD_READER_OPTIONS_READ_AHEAD;
      return this;
    }

    /**
     * Bytes per read (default 0: 1 MiB).
     *
     * @param bytes the size
     * @return this
     */
    public Options bufferSize(long bytes) {
      this.bufferSize = bytes;
      set |= CairnNative.RECORD_READER_OPTIONS_BUFFER_SIZE;
      return this;
    }
  }

  /**
   * Reads the next record.
   *
   * @return its bytes; null at the end of the file or at an incomplete last record ({@link
   *     #partial()}), where the reader stays so that a later call retries
   * @throws CairnException DATA_LOSS "&lt;path&gt;: corrupt record at offset N: ..."; the reader is
   *     unusable then
   */
  public byte[] next() {
    long h = handle();
    try {
      return IoNative.recordReaderNext(h);
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /**
   * Whether the last {@link #next()} found an incomplete record at {@link #offset()} (a file still
   * being written, or one cut short) rather than the end of the file.
   *
   * @return whether the last read stopped at a partial record
   */
  public boolean partial() {
    long h = handle();
    try {
      return CairnNative.recordReaderPartial(h) != 0;
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /**
   * Where the next record starts in the uncompressed stream (the file offset without compression).
   *
   * @return the offset
   */
  public long offset() {
    long h = handle();
    try {
      return CairnNative.recordReaderOffset(h);
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /**
   * Moves to {@code offset}, a record's start as {@link #offset()} gave it.
   *
   * @param offset the offset
   * @throws CairnException INVALID_ARGUMENT for a negative offset; OUT_OF_RANGE past the end of a
   *     compressed stream
   */
  public void seek(long offset) {
    long h = handle();
    try {
      CairnNative.recordReaderSeek(h, offset);
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /**
   * Moves to record {@code index} (0-based; the record count moves to the end) through the index
   * sidecar.
   *
   * @param index the record
   * @throws CairnException FAILED_PRECONDITION without a valid index ({@link #buildIndex}); OUT_OF_RANGE
   */
  public void seekRecord(long index) {
    long h = handle();
    try {
      CairnNative.recordReaderSeekRecord(h, index);
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /**
   * The records from the reader's position on; each {@code next()} of the iterator reads one. The
   * iteration ends at the end of the file or at a partial record ({@link #partial()}); a later
   * iterator resumes there.
   *
   * @return an iterator over the records
   */
  @Override
  public Iterator<byte[]> iterator() {
    return new Iterator<>() {
      private byte[] pending;
      private boolean done;

      @Override
      public boolean hasNext() {
        if (pending == null && !done) {
          pending = RecordReader.this.next();
          done = pending == null;
        }
        return pending != null;
      }

      @Override
      public byte[] next() {
        if (!hasNext()) throw new NoSuchElementException();
        byte[] r = pending;
        pending = null;
        return r;
      }
    };
  }

  /**
   * The number of complete records in {@code path}: from a valid index sidecar in O(1), otherwise
   * by reading the file.
   *
   * @param path the file
   * @param options the options (compression, checksums); null for the defaults
   * @return the count
   */
  public static long fileCount(String path, Options options) {
    Objects.requireNonNull(path, "path");
    Options o = options == null ? new Options() : options;
    NativeLibrary.check();
    return CairnNative.recordFileCount(NativeResources.cstr(path), o.set, o.compression.value(),
        o.verifyChecksums ? 1 : 0, o.readAhead ? 1 : 0, o.bufferSize);
  }

  /**
   * Reads {@code path} and writes its index sidecar {@code <path>.cairnidx} (replacing a stale one).
   *
   * @param path the file
   * @param options the options; null for the defaults
   * @return the number of records indexed
   */
  public static long buildIndex(String path, Options options) {
    Objects.requireNonNull(path, "path");
    Options o = options == null ? new Options() : options;
    NativeLibrary.check();
    return CairnNative.recordIndexBuild(NativeResources.cstr(path), o.set, o.compression.value(),
        o.verifyChecksums ? 1 : 0, o.readAhead ? 1 : 0, o.bufferSize);
  }

  /**
   * The records [begin, end) of shard {@code shard} of {@code numShards} over {@code count} records;
   * every record is in exactly one shard. Use with {@link #seekRecord(long)}.
   *
   * @param count the number of records
   * @param numShards the number of shards
   * @param shard this shard, in [0, numShards)
   * @return {begin, end}
   * @throws CairnException INVALID_ARGUMENT for a negative count or a shard out of range
   */
  public static long[] shardRange(long count, long numShards, long shard) {
    NativeLibrary.check();
    return IoNative.recordShardRange(count, numShards, shard);
  }
}
