package dev.cairn;

import static dev.cairn.ClosedAssert.assertClosed;
import static org.junit.jupiter.api.Assertions.*;

import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** TFRecord files: writer and reader options, the iterator, partial records, seeking, indexes, errors. */
class RecordsTest {
  @TempDir Path dir;

  private static byte[] rec(int i) {
    return ("record " + i).repeat(i % 3 + 1).getBytes(StandardCharsets.UTF_8);
  }

  private static List<byte[]> readAll(RecordReader r) {
    List<byte[]> out = new ArrayList<>();
    for (byte[] b : r) out.add(b);
    return out;
  }

  @Test
  void roundTripsEveryCompression() {
    for (Compression c : Compression.values()) {
      String path = dir.resolve("r-" + c).toString();
      try (RecordWriter w = RecordWriter.open(path, RecordWriter.options().compression(c).level(9))) {
        for (int i = 0; i < 10; ++i) w.write(rec(i));
        w.write(new byte[0]);
        w.write(ByteBuffer.allocateDirect(3).put(new byte[] {1, 2, 3}).flip());
        assertEquals(12, w.count());
      }
      RecordReader.Options ro = RecordReader.options().compression(c);
      try (RecordReader r = RecordReader.open(path, ro)) {
        List<byte[]> got = readAll(r);
        assertEquals(12, got.size(), c.toString());
        for (int i = 0; i < 10; ++i) assertArrayEquals(rec(i), got.get(i));
        assertArrayEquals(new byte[0], got.get(10));
        assertArrayEquals(new byte[] {1, 2, 3}, got.get(11));
        assertFalse(r.partial());
        assertNull(r.next());
      }
      assertEquals(12, RecordReader.fileCount(path, ro));
    }
  }

  @Test
  void appendsAndFlushes() throws Exception {
    String path = dir.resolve("a.tfrecord").toString();
    try (RecordWriter w = RecordWriter.open(path)) {
      w.write(rec(0));
    }
    try (RecordWriter w = RecordWriter.open(path, RecordWriter.options().append(true));
        RecordReader r = RecordReader.open(path)) {
      w.write(rec(1));
      w.flush();
      w.write(rec(2));
      w.sync();
      assertEquals(3, readAll(r).size());
    }
  }

  @Test
  void partialTailIsNotYetAndResumes() throws Exception {
    Path full = dir.resolve("full.tfrecord");
    try (RecordWriter w = RecordWriter.open(full.toString())) {
      for (int i = 0; i < 3; ++i) w.write(rec(i));
    }
    byte[] bytes = Files.readAllBytes(full);
    Path growing = dir.resolve("growing.tfrecord");
    Files.write(growing, Arrays.copyOf(bytes, bytes.length - 5));
    try (RecordReader r = RecordReader.open(growing.toString())) {
      assertEquals(2, readAll(r).size());
      assertTrue(r.partial());
      long at = r.offset();
      assertNull(r.next());
      assertEquals(at, r.offset());
      Files.write(growing, bytes); // the writer finishes the record
      assertArrayEquals(rec(2), r.next());
      assertNull(r.next());
      assertFalse(r.partial());
    }
  }

  @Test
  void seeksByOffsetAndIndex() {
    String path = dir.resolve("i.tfrecord").toString();
    try (RecordWriter w = RecordWriter.open(path, RecordWriter.options().writeIndex(true))) {
      for (int i = 0; i < 20; ++i) w.write(rec(i));
    }
    assertTrue(Files.exists(Path.of(path + ".cairnidx")));
    try (RecordReader r = RecordReader.open(path)) {
      r.next();
      long second = r.offset();
      r.seekRecord(7);
      assertArrayEquals(rec(7), r.next());
      r.seek(second);
      assertArrayEquals(rec(1), r.next());
      long[] range = RecordReader.shardRange(20, 3, 1);
      assertArrayEquals(new long[] {6, 13}, range);
      r.seekRecord(range[0]);
      assertArrayEquals(rec(6), r.next());
      CairnException e = assertThrows(CairnException.class, () -> r.seekRecord(21));
      assertEquals(Code.OUT_OF_RANGE, e.code());
    }
    assertEquals(Code.INVALID_ARGUMENT, assertThrows(CairnException.class, () -> RecordReader.shardRange(5, 2, 2)).code());
  }

  @Test
  void buildsAnIndex() throws Exception {
    String path = dir.resolve("n.tfrecord").toString();
    try (RecordWriter w = RecordWriter.open(path)) {
      for (int i = 0; i < 5; ++i) w.write(rec(i));
    }
    try (RecordReader r = RecordReader.open(path)) {
      CairnException e = assertThrows(CairnException.class, () -> r.seekRecord(1));
      assertEquals(Code.FAILED_PRECONDITION, e.code());
    }
    assertEquals(5, RecordReader.buildIndex(path, null));
    try (RecordReader r = RecordReader.open(path)) {
      r.seekRecord(4);
      assertArrayEquals(rec(4), r.next());
    }
  }

  @Test
  void corruptRecordNamesPathAndOffset() throws Exception {
    Path path = dir.resolve("bad.tfrecord");
    try (RecordWriter w = RecordWriter.open(path.toString())) {
      w.write(rec(0));
      w.write(rec(1));
    }
    long second;
    try (RecordReader r = RecordReader.open(path.toString())) {
      r.next();
      second = r.offset();
    }
    try (RandomAccessFile f = new RandomAccessFile(path.toFile(), "rw")) {
      f.seek(second + 14); // a data byte of the second record
      f.write(f.read() ^ 0xff);
    }
    try (RecordReader r = RecordReader.open(path.toString())) {
      var it = r.iterator();
      assertArrayEquals(rec(0), it.next());
      CairnException e = assertThrows(CairnException.class, it::hasNext);
      assertEquals(Code.DATA_LOSS, e.code());
      assertTrue(e.getMessage().contains(path.toString()), e.getMessage());
      assertTrue(e.getMessage().contains("offset " + second), e.getMessage());
    }
    // Without checksums the flipped byte goes through.
    try (RecordReader r = RecordReader.open(path.toString(), RecordReader.options().verifyChecksums(false).bufferSize(64))) {
      assertEquals(2, readAll(r).size());
    }
  }

  @Test
  void errorsAndClose() {
    String missing = dir.resolve("no/such/dir/x").toString();
    CairnException e = assertThrows(CairnException.class, () -> RecordReader.open(missing));
    assertEquals(Code.NOT_FOUND, e.code());
    assertTrue(e.getMessage().contains(missing), e.getMessage());
    e = assertThrows(CairnException.class,
        () -> RecordWriter.open(dir.resolve("x").toString(), RecordWriter.options().writeIndex(true).append(true)));
    assertEquals(Code.INVALID_ARGUMENT, e.code());

    RecordWriter w = RecordWriter.open(dir.resolve("c.tfrecord").toString());
    w.write(rec(0));
    w.close();
    w.close(); // idempotent
    assertClosed("FAILED_PRECONDITION: RecordWriter.write: record writer is closed", () -> w.write(rec(1)));
    assertClosed("FAILED_PRECONDITION: RecordWriter.flush: record writer is closed", w::flush);
    RecordReader r = RecordReader.open(dir.resolve("c.tfrecord").toString());
    r.close();
    assertClosed("FAILED_PRECONDITION: RecordReader.next: record reader is closed", r::next);
  }
}
