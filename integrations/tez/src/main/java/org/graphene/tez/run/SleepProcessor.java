package org.graphene.tez.run;

import java.io.File;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.Map;

import org.apache.tez.runtime.api.AbstractLogicalIOProcessor;
import org.apache.tez.runtime.api.Event;
import org.apache.tez.runtime.api.LogicalInput;
import org.apache.tez.runtime.api.LogicalOutput;
import org.apache.tez.runtime.api.ProcessorContext;
import org.apache.tez.runtime.api.Reader;
import org.apache.tez.runtime.library.api.KeyValueReader;
import org.apache.tez.runtime.library.api.KeyValuesReader;

/**
 * A task of the runner: drains its inputs (which carry no records), sleeps its own duration
 * (payload: the record directory, then one duration in milliseconds per task index), opens its
 * outputs without writing, and records where and when it ran in the record directory:
 * {@code vertex,task,attempt,container,node,start_ms,end_ms} (epoch ms; container and node from
 * the container's environment, {@code local} in Tez local mode).
 */
public class SleepProcessor extends AbstractLogicalIOProcessor {
  public SleepProcessor(ProcessorContext context) {
    super(context);
  }

  /** The payload text: the record directory, a newline, the durations in ms, comma-separated. */
  public static String payload(String recordDir, long[] durationsMs) {
    StringBuilder b = new StringBuilder(recordDir).append('\n');
    for (int i = 0; i < durationsMs.length; i++) {
      if (i > 0) {
        b.append(',');
      }
      b.append(durationsMs[i]);
    }
    return b.toString();
  }

  @Override
  public void initialize() {}

  @Override
  public void handleEvents(List<Event> processorEvents) {}

  @Override
  public void close() {}

  @Override
  public void run(Map<String, LogicalInput> inputs, Map<String, LogicalOutput> outputs) throws Exception {
    long start = System.currentTimeMillis();
    ProcessorContext ctx = getContext();
    ByteBuffer buf = ctx.getUserPayload().getPayload();
    byte[] bytes = new byte[buf.remaining()];
    buf.duplicate().get(bytes);
    String text = new String(bytes, StandardCharsets.UTF_8);
    int nl = text.indexOf('\n');
    String dir = text.substring(0, nl);
    int index = ctx.getTaskIndex();
    long sleepMs = durationOf(text, nl + 1, index);
    for (LogicalInput in : inputs.values()) {
      in.start();
    }
    for (LogicalOutput out : outputs.values()) {
      out.start();
    }
    for (LogicalInput in : inputs.values()) {
      Reader r = in.getReader();
      if (r instanceof KeyValuesReader) {
        while (((KeyValuesReader) r).next()) {
          // no records are written; drain whatever arrives
        }
      } else if (r instanceof KeyValueReader) {
        while (((KeyValueReader) r).next()) {
          // as above
        }
      }
    }
    for (LogicalOutput out : outputs.values()) {
      out.getWriter();
    }
    long wake = start + sleepMs;
    for (long now = System.currentTimeMillis(); now < wake; now = System.currentTimeMillis()) {
      Thread.sleep(wake - now);
    }
    long end = System.currentTimeMillis();
    String container = env("CONTAINER_ID");
    String node = env("NM_HOST");
    String line = ctx.getTaskVertexName().replace('\n', ' ').replace('\t', ' ') + "\t" + index + "\t"
        + ctx.getTaskAttemptNumber() + "\t" + container + "\t" + node + "\t" + start + "\t" + end + "\n";
    String base = "v" + ctx.getTaskVertexIndex() + "-t" + index + "-a" + ctx.getTaskAttemptNumber();
    File tmp = new File(dir, "." + base + ".tmp");
    Files.write(tmp.toPath(), line.getBytes(StandardCharsets.UTF_8));
    Files.move(tmp.toPath(), new File(dir, base + ".tsv").toPath(), StandardCopyOption.ATOMIC_MOVE);
  }

  private static String env(String name) {
    String v = System.getenv(name);
    return v == null || v.isEmpty() ? "local" : v;
  }

  static long durationOf(String text, int from, int index) throws IOException {
    int pos = from;
    for (int i = 0; i < index; i++) {
      pos = text.indexOf(',', pos);
      if (pos < 0) {
        throw new IOException("no duration for task " + index);
      }
      pos++;
    }
    int end = text.indexOf(',', pos);
    return Long.parseLong(text.substring(pos, end < 0 ? text.length() : end));
  }
}
