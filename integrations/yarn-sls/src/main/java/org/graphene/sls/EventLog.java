package org.graphene.sls;

import java.io.BufferedWriter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;

/**
 * The AM's record of what happened to every task, one CSV line per event, shared by all the
 * AMs of a run (SLS runs them on a thread pool, so writes are synchronized and flushed per
 * line: a run that dies still leaves everything up to that point).
 *
 * <p>SLS's own outputs do not say which container served which task, nor when a request was
 * sent: {@code jobruntime.csv} has one line per application and the realtime track is
 * aggregate. {@code scripts/yarn-sls} turns this log into {@code containers.csv} and
 * {@code jobs.csv}. Times are wall-clock milliseconds ({@code System.currentTimeMillis}), as
 * SLS's TaskRunner schedules everything; the script rebases them on the run's start.
 *
 * <p>Columns: {@code event,wall_ms,job,app,arrival_ms,task,priority,vcores,memory_mb,node,
 * container,detail}. Events: {@code arrive} (the AM's first step), {@code request} (the
 * task's container request sent: all its parents have finished), {@code start} (container
 * allocated and launched), {@code end} (the AM saw it complete), {@code killed} (preempted or
 * lost; the task is requested again), {@code done} (the job's last task finished),
 * {@code skip} (the job cannot run; detail says why).
 */
public final class EventLog {
  /** Configuration key (sls-runner.xml) naming the log file. */
  public static final String FILE_KEY = "yarn.sls.graphene.events.file";
  public static final String HEADER =
      "event,wall_ms,job,app,arrival_ms,task,priority,vcores,memory_mb,node,container,detail";

  private static EventLog shared;

  private final BufferedWriter out;

  private EventLog(Path path) throws IOException {
    Path parent = path.toAbsolutePath().getParent();
    if (parent != null) {
      Files.createDirectories(parent);
    }
    this.out = Files.newBufferedWriter(path, StandardCharsets.UTF_8);
    out.write(HEADER);
    out.newLine();
    out.flush();
  }

  /** The run's log, opened (and truncated) on first use; null when no file is configured. */
  public static synchronized EventLog open(String file) {
    if (shared == null && file != null && !file.isEmpty()) {
      try {
        shared = new EventLog(Paths.get(file));
      } catch (IOException e) {
        throw new UncheckedIOException("cannot write the graphene event log " + file, e);
      }
    }
    return shared;
  }

  /** Closes the shared log so that a later run in the same JVM (tests) starts a new one. */
  public static synchronized void reset() {
    if (shared != null) {
      try {
        shared.out.close();
      } catch (IOException e) {
        // Nothing to do: every line was flushed when it was written.
      }
      shared = null;
    }
  }

  public synchronized void write(String event, String job, String app, long arrivalMs,
      String task, Integer priority, Long vcores, Long memoryMb, String node, String container,
      String detail) {
    StringBuilder b = new StringBuilder();
    b.append(event).append(',').append(System.currentTimeMillis()).append(',')
        .append(csv(job)).append(',').append(csv(app)).append(',').append(arrivalMs)
        .append(',').append(csv(task)).append(',').append(priority == null ? "" : priority)
        .append(',').append(vcores == null ? "" : vcores).append(',')
        .append(memoryMb == null ? "" : memoryMb).append(',').append(csv(node)).append(',')
        .append(csv(container)).append(',').append(csv(detail));
    try {
      out.write(b.toString());
      out.newLine();
      out.flush();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** RFC 4180 quoting when needed (stage names and reasons may hold commas or quotes). */
  static String csv(String s) {
    if (s == null) {
      return "";
    }
    if (s.indexOf(',') < 0 && s.indexOf('"') < 0 && s.indexOf('\n') < 0) {
      return s;
    }
    return '"' + s.replace("\"", "\"\"").replace('\n', ' ') + '"';
  }
}
