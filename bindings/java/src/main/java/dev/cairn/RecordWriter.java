package dev.cairn;

import java.lang.ref.Reference;
import java.nio.ByteBuffer;
import java.util.Objects;

/**
 * A TFRecord file being written (tf.io.TFRecordWriter); cairn_record_writer. Records are buffered:
 * readers see them after {@link #flush()} or {@link #close()}. Use it from one thread at a time.
 *
 * <pre>{@code
 * try (RecordWriter w = RecordWriter.open("data.tfrecord", RecordWriter.options().compression(Compression.GZIP))) {
 *   w.write(bytes);
 * }
 * }</pre>
 *
 * <p>{@link #close()} flushes, ends the stream and writes the index sidecar when asked, and throws
 * {@link CairnException} for a failed write (the last chance to see one); later calls throw
 * FAILED_PRECONDITION.
 */
public final class RecordWriter extends NativeHandle {
  private boolean finished; // close() ran cairn_record_writer_close

  private RecordWriter(long handle) {
    super(handle, CairnNative::recordWriterFree);
  }

  /**
   * Creates (or truncates) the record file {@code path} with the default options.
   *
   * @param path the file
   * @return the writer
   */
  public static RecordWriter open(String path) {
    return open(path, null);
  }

  /**
   * Creates, truncates or (with {@link Options#append}) appends to the record file {@code path}.
   *
   * @param path the file
   * @param options the options; null for the defaults
   * @return the writer
   * @throws CairnException NOT_FOUND / PERMISSION_DENIED naming the path; INVALID_ARGUMENT for bad options
   */
  public static RecordWriter open(String path, Options options) {
    Objects.requireNonNull(path, "path");
    if (options == null) options = new Options();
    NativeLibrary.check();
    return new RecordWriter(CairnNative.recordWriterOpen(NativeResources.cstr(path), options.set,
        options.compression.value(), options.level, options.writeIndex ? 1 : 0, options.append ? 1 : 0));
  }

  /**
   * New default options.
   *
   * @return options with every field at its default
   */
  public static Options options() {
    return new Options();
  }

  /** Options of {@link #open(String, Options)} (cairn_record_writer_options); unset fields keep their defaults. */
  public static final class Options {
    private long set;
    private Compression compression = Compression.NONE;
    private int level = -1;
    private boolean writeIndex;
    private boolean append;

    /** Default options. */
    public Options() {}

    /**
     * Stream compression (default NONE).
     *
     * @param compression NONE, ZLIB or GZIP
     * @return this
     */
    public Options compression(Compression compression) {
      this.compression = Objects.requireNonNull(compression, "compression");
      set |= CairnNative.RECORD_WRITER_OPTIONS_COMPRESSION;
      return this;
    }

    /**
     * zlib level 0..9 (default -1: zlib's default, 6).
     *
     * @param level the level
     * @return this
     */
    public Options level(int level) {
      this.level = level;
      set |= CairnNative.RECORD_WRITER_OPTIONS_LEVEL;
      return this;
    }

    /**
     * Write the index sidecar {@code <path>.cairnidx} on close (default false).
     *
     * @param writeIndex whether to write it
     * @return this
     */
    public Options writeIndex(boolean writeIndex) {
      this.writeIndex = writeIndex;
      set |= CairnNative.RECORD_WRITER_OPTIONS_WRITE_INDEX;
      return this;
    }

    /**
     * Append to an existing file instead of truncating it (default false; no index then).
     *
     * @param append whether to append
     * @return this
     */
    public Options append(boolean append) {
      this.append = append;
      set |= CairnNative.RECORD_WRITER_OPTIONS_APPEND;
      return this;
    }
  }

  /**
   * Appends one record.
   *
   * @param record its bytes (copied)
   * @throws CairnException FAILED_PRECONDITION after close; an I/O error naming the path
   */
  public void write(byte[] record) {
    Objects.requireNonNull(record, "record");
    long h = handle();
    try {
      CairnNative.recordWriterWrite(h, record);
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /**
   * Appends one record: the remaining bytes of a direct buffer (its position is not moved).
   *
   * @param record a direct buffer
   */
  public void write(ByteBuffer record) {
    Objects.requireNonNull(record, "record");
    if (!record.isDirect()) {
      byte[] copy = new byte[record.remaining()];
      record.duplicate().get(copy);
      write(copy);
      return;
    }
    ByteBuffer slice = record.slice();
    long h = handle();
    try {
      CairnNative.recordWriterWrite(h, slice);
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /** Hands every record written so far to the operating system, so that readers see them. */
  public void flush() {
    long h = handle();
    try {
      CairnNative.recordWriterFlush(h);
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /** {@link #flush()}, then fsync: the records survive a crash of the machine. */
  public void sync() {
    long h = handle();
    try {
      CairnNative.recordWriterSync(h);
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /**
   * Records written so far.
   *
   * @return the count
   */
  public long count() {
    long h = handle();
    try {
      return CairnNative.recordWriterCount(h);
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /**
   * Flushes, ends the compressed stream, closes the file, writes the index when asked and frees
   * the writer. Calling it again does nothing.
   *
   * @throws CairnException the error of a failed write (the writer is freed anyway)
   */
  @Override
  public void close() {
    synchronized (this) {
      if (finished || isClosed()) return;
      finished = true;
    }
    try {
      CairnNative.recordWriterClose(handle());
    } finally {
      Reference.reachabilityFence(this);
      super.close();
    }
  }
}
