package org.graphene.tez.run;

import java.io.File;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Stream;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.MiniYARNCluster;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.CapacityScheduler;
import org.apache.log4j.AppenderSkeleton;
import org.apache.log4j.spi.LoggingEvent;
import org.apache.tez.client.TezClient;
import org.apache.tez.dag.api.DAG;
import org.apache.tez.dag.api.Edge;
import org.apache.tez.dag.api.ProcessorDescriptor;
import org.apache.tez.dag.api.TezConfiguration;
import org.apache.tez.dag.api.UserPayload;
import org.apache.tez.dag.api.Vertex;
import org.apache.tez.dag.api.client.DAGClient;
import org.apache.tez.dag.api.client.DAGStatus;
import org.apache.tez.dag.api.client.StatusGetOpts;
import org.apache.tez.runtime.library.conf.OrderedPartitionedKVEdgeConfig;
import org.apache.tez.runtime.library.conf.UnorderedKVEdgeConfig;
import org.apache.tez.runtime.library.partitioner.HashPartitioner;

/**
 * Runs a graphene native JSON DAG as a real Tez job: one vertex per stage (parallelism = its task
 * count, a {@link SleepProcessor} sleeping each task's own duration x the time scale, a Resource
 * per vertex from the stage's largest demand), SCATTER_GATHER edges for all-to-all and ONE_TO_ONE
 * for one-to-one, through Tez runtime inputs and outputs that carry no records. In Tez local mode
 * or on a MiniYARNCluster (the CapacityScheduler, NodeManagers launching the AM and the tasks as
 * processes). Each run has its own AM. Writes runs.csv, tasks.csv and, per run, the AM's lines
 * about its DAG scheduler in logs/ORDER-RUN.am.log. Run without arguments for the options.
 */
public final class TezRun {
  public static final String GRAPHENE_SCHEDULER = "org.graphene.tez.GrapheneDAGScheduler";
  public static final String NATURAL_SCHEDULER = "org.apache.tez.dag.app.dag.impl.DAGSchedulerNaturalOrder";
  static final String SCHEDULER_KEY = "tez.am.dag.scheduler.class";
  static final String EXPORT_KEY = "graphene.tez.export";

  static final String USAGE = String.join("\n",
      "usage: TezRun --dag DAG.json --out DIR [options]",
      "  --dag FILE             graphene native JSON DAG (graphene convert writes one from any format)",
      "  --out DIR              runs.csv, tasks.csv, logs/ (created)",
      "  --order O[,O]          graphene and/or natural (repeatable) [graphene]",
      "  --export DIR|FILE      graphene's tez export(s) the plugin reads (needed for graphene)",
      "  --mode local|yarn      Tez local mode, or a MiniYARNCluster [local]",
      "  --runs N               runs per order [1]",
      "  --nodes N              yarn: NodeManagers [1]",
      "  --node-vcores V        yarn: vcores per node [4]",
      "  --node-memory-mb M     yarn: memory per node [8192]",
      "  --time-scale K         seconds slept per unit of task duration [1]",
      "  --cpu-resource NAME    DAG resource counted as vcores, rounded up, at least 1 [cpu]",
      "  --mem-resource NAME    DAG resource counted as memory [mem]",
      "  --mem-mb MB            megabytes per unit of the memory resource [1024]",
      "  --min-task-mb MB       smallest task container [256]",
      "  --history-dir DIR      Tez's SimpleHistoryLoggingService writes the runs' history here",
      "                         (tez.simple.history.logging.dir), as `graphene --format tez` reads it",
      "  --timeout S            a run still going after S seconds is killed [600]",
      "  --rm-scheduler S       yarn: the ResourceManager's scheduler, capacity or graphene",
      "                         (org.graphene.yarn.GrapheneScheduler, integrations/yarn-scheduler's",
      "                         jar on the classpath) [capacity]");

  static final class Options {
    File dag;
    File out;
    List<String> orders = new ArrayList<>();
    File export;
    boolean yarn;
    int runs = 1;
    int nodes = 1;
    int nodeVcores = 4;
    int nodeMemoryMb = 8192;
    double timeScale = 1.0;
    String cpuResource = "cpu";
    String memResource = "mem";
    double memMb = 1024;
    int minTaskMb = 256;
    File historyDir;
    int timeoutS = 600;
    boolean grapheneRm;
  }

  public static void main(String[] args) {
    int code;
    try {
      code = run(parse(args));
    } catch (UsageError e) {
      System.err.println("tez-run: " + e.getMessage());
      System.err.println(USAGE);
      code = 2;
    } catch (IOException e) {
      System.err.println("tez-run: error: " + e.getMessage());
      code = 1;
    } catch (Exception e) {
      StringWriter w = new StringWriter();
      e.printStackTrace(new PrintWriter(w));
      System.err.println("tez-run: error: " + e + "\n" + w);
      code = 1;
    }
    System.exit(code);
  }

  static final class UsageError extends Exception {
    UsageError(String m) {
      super(m);
    }
  }

  static Options parse(String[] args) throws UsageError {
    Options o = new Options();
    if (args.length == 0) {
      throw new UsageError("no arguments");
    }
    for (int i = 0; i < args.length; i++) {
      String a = args[i];
      if (a.equals("-h") || a.equals("--help")) {
        System.out.println(USAGE);
        System.exit(0);
      }
      if (i + 1 >= args.length) {
        throw new UsageError(a + ": missing value");
      }
      String v = args[++i];
      switch (a) {
        case "--dag": o.dag = new File(v); break;
        case "--out": o.out = new File(v); break;
        case "--order":
          for (String s : v.split(",")) {
            if (!s.equals("graphene") && !s.equals("natural")) {
              throw new UsageError("--order: expected graphene or natural, got '" + s + "'");
            }
            if (!o.orders.contains(s)) {
              o.orders.add(s);
            }
          }
          break;
        case "--export": o.export = new File(v); break;
        case "--mode":
          if (!v.equals("local") && !v.equals("yarn")) {
            throw new UsageError("--mode: expected local or yarn, got '" + v + "'");
          }
          o.yarn = v.equals("yarn");
          break;
        case "--runs": o.runs = positive(a, v); break;
        case "--nodes": o.nodes = positive(a, v); break;
        case "--node-vcores": o.nodeVcores = positive(a, v); break;
        case "--node-memory-mb": o.nodeMemoryMb = positive(a, v); break;
        case "--time-scale": o.timeScale = positiveDouble(a, v); break;
        case "--cpu-resource": o.cpuResource = v; break;
        case "--mem-resource": o.memResource = v; break;
        case "--mem-mb": o.memMb = positiveDouble(a, v); break;
        case "--min-task-mb": o.minTaskMb = positive(a, v); break;
        case "--history-dir": o.historyDir = new File(v); break;
        case "--timeout": o.timeoutS = positive(a, v); break;
        case "--rm-scheduler":
          if (!v.equals("capacity") && !v.equals("graphene")) {
            throw new UsageError("--rm-scheduler: expected capacity or graphene, got '" + v + "'");
          }
          o.grapheneRm = v.equals("graphene");
          break;
        default: throw new UsageError("unknown option " + a);
      }
    }
    if (o.dag == null || o.out == null) {
      throw new UsageError("--dag and --out are required");
    }
    if (o.orders.isEmpty()) {
      o.orders.add("graphene");
    }
    if (o.orders.contains("graphene") && o.export == null) {
      throw new UsageError("--order graphene needs --export (the graphene tez export or a directory of them)");
    }
    return o;
  }

  private static int positive(String flag, String v) throws UsageError {
    try {
      int n = Integer.parseInt(v);
      if (n >= 1) {
        return n;
      }
    } catch (NumberFormatException e) {
      // below
    }
    throw new UsageError(flag + ": expected a whole number >= 1, got '" + v + "'");
  }

  private static double positiveDouble(String flag, String v) throws UsageError {
    try {
      double d = Double.parseDouble(v);
      if (d > 0 && Double.isFinite(d)) {
        return d;
      }
    } catch (NumberFormatException e) {
      // below
    }
    throw new UsageError(flag + ": expected a number > 0, got '" + v + "'");
  }

  /** A vertex's container: memory (MB) and vcores, from the stage's largest task demand. */
  static Resource resourceOf(Options o, RunDag.Stage s) {
    double mem = s.demand(o.memResource) * o.memMb;
    long mb = Math.max(o.minTaskMb, (long) Math.ceil(mem));
    int vcores = (int) Math.max(1, Math.ceil(s.demand(o.cpuResource) - 1e-9));
    return Resource.newInstance(mb, vcores);
  }

  static int run(Options o) throws Exception {
    RunDag dag = RunDag.read(o.dag);
    if (o.export != null && !o.export.exists()) {
      throw new IOException(o.export + ": no such export file or directory");
    }
    for (RunDag.Stage s : dag.stages.values()) {
      Resource r = resourceOf(o, s);
      for (long d : durationsMs(o, s)) {
        if (d < 0) {
          throw new IOException(o.dag + ": stage '" + s.id + "': a duration x time scale is beyond a long of ms");
        }
      }
    }
    if (o.yarn) {
      checkFits(o, dag);
    }
    Files.createDirectories(o.out.toPath());
    File logs = new File(o.out, "logs");
    Files.createDirectories(logs.toPath());
    if (o.historyDir != null) {
      Files.createDirectories(o.historyDir.toPath());
    }
    MiniYARNCluster cluster = null;
    Configuration base;
    if (o.yarn) {
      cluster = startCluster(o);
      base = new Configuration(cluster.getConfig());
    } else {
      base = new Configuration();
    }
    StringBuilder runsCsv = new StringBuilder("order,run,seconds,status\n");
    StringBuilder tasksCsv = new StringBuilder("order,run,vertex,task,container,node,start,end\n");
    int failed = 0;
    try {
      // Interleaved (graphene 1, natural 1, graphene 2, ...): a change of the machine's load
      // during the series hits both orders alike.
      for (int run = 1; run <= o.runs; run++) {
        for (String order : o.orders) {
          String tag = order + "-" + run;
          File records = new File(o.out, "records/" + tag);
          deleteTree(records.toPath());
          Files.createDirectories(records.toPath());
          File amLog = new File(logs, tag + ".am.log");
          System.err.println("tez-run: " + dag.name + ": order " + order + ", run " + run + " ("
              + (o.yarn ? "MiniYARNCluster, " + o.nodes + " node(s)" : "Tez local mode") + ")");
          String[] result = runOnce(o, dag, order, base, cluster, records, amLog);
          runsCsv.append(order).append(',').append(run).append(',').append(result[0]).append(',')
              .append(result[1]).append('\n');
          if (!result[1].equals("SUCCEEDED")) {
            failed++;
          }
          System.err.println("tez-run: " + tag + ": " + result[1] + " in " + result[0] + " s");
          if (result[1].equals("TIMEOUT")) {
            String[] done = records.list((d, n) -> n.endsWith(".tsv"));
            System.err.println("tez-run: error: " + tag + ": DAG '" + dag.name + "' did not finish within "
                + o.timeoutS + " s (--timeout) and was killed; " + (done == null ? 0 : done.length) + " of "
                + dag.taskCount() + " tasks had finished. A task that never starts waits for a container"
                + " YARN cannot give it; see " + new File(o.out, "run.log") + " and the NodeManager logs under "
                + new File(o.out, "yarn"));
          }
          appendTasks(tasksCsv, order, run, records, Long.parseLong(result[2]));
          // Written after every run, so a long series leaves what it did if stopped.
          writeAtomic(new File(o.out, "runs.csv"), runsCsv.toString());
          writeAtomic(new File(o.out, "tasks.csv"), tasksCsv.toString());
        }
      }
    } finally {
      if (cluster != null) {
        cluster.stop();
      }
    }
    return failed == 0 ? 0 : 1;
  }

  /** The Tez AM's container on the MiniYARNCluster (TEZ_AM_RESOURCE_MEMORY_MB below). */
  static final int AM_MB = 512;
  static final int AM_VCORES = 1;
  /** The ResourceManager's minimum allocation: every request is rounded up to a multiple of it. */
  static int minAllocationMb(Options o) {
    return Math.min(128, o.minTaskMb);
  }

  /**
   * Refuses, before any cluster starts, a DAG a task of which could never get a container: the
   * ResourceManager rounds each request up to a multiple of its minimum allocation and never
   * places a container across nodes, and on a single node the AM's container holds part of it
   * for the whole run. Without this check YARN keeps the request pending and the DAG waits for
   * ever (until --timeout).
   */
  static void checkFits(Options o, RunDag dag) throws IOException {
    long usable = o.nodes == 1 ? o.nodeMemoryMb - AM_MB : o.nodeMemoryMb;
    int usableVcores = o.nodes == 1 ? o.nodeVcores - AM_VCORES : o.nodeVcores;
    if (usable < minAllocationMb(o) || usableVcores < 1) {
      throw new IOException("nodes of " + o.nodeMemoryMb + " MB cannot hold the Tez AM (" + AM_MB
          + " MB, " + AM_VCORES + " vcore) and a task: give larger nodes (--node-capacity) or more of them");
    }
    for (RunDag.Stage s : dag.stages.values()) {
      Resource r = resourceOf(o, s);
      long min = minAllocationMb(o);
      long mb = (r.getMemorySize() + min - 1) / min * min;
      if (mb > usable || r.getVirtualCores() > usableVcores) {
        String where = o.nodes == 1
            ? "the single node holds " + o.nodeMemoryMb + " MB and " + o.nodeVcores + " vcores, " + AM_MB
                + " MB and " + AM_VCORES + " vcore of them the Tez AM's"
            : "a node holds " + o.nodeMemoryMb + " MB and " + o.nodeVcores + " vcores";
        throw new IOException(o.dag + ": vertex '" + s.id + "' asks for containers of " + mb + " MB ("
            + fmt(s.demand(o.memResource)) + " " + o.memResource + " x " + fmt(o.memMb) + " MB) and "
            + r.getVirtualCores() + " vcores, but " + where + ": no node could ever run it. Give larger"
            + " nodes (--node-capacity), or count fewer MB per unit of " + o.memResource + " (--mem-mb)");
      }
    }
  }

  static String fmt(double d) {
    return d == Math.rint(d) && Math.abs(d) < 1e15 ? Long.toString((long) d) : String.format(Locale.ROOT, "%.3f", d);
  }

  static long[] durationsMs(Options o, RunDag.Stage s) {
    long[] out = new long[s.durations.length];
    for (int i = 0; i < out.length; i++) {
      double ms = s.durations[i] * o.timeScale * 1000.0;
      out[i] = ms >= 9.0e18 ? -1 : Math.round(ms);
    }
    return out;
  }

  static MiniYARNCluster startCluster(Options o) {
    YarnConfiguration yc = new YarnConfiguration();
    // graphene's scheduler by name: it lives in integrations/yarn-scheduler, whose jar
    // scripts/tez-yarn puts on the classpath; the RM fails to start without it.
    yc.set(YarnConfiguration.RM_SCHEDULER,
        o.grapheneRm ? "org.graphene.yarn.GrapheneScheduler" : CapacityScheduler.class.getName());
    yc.set("yarn.scheduler.capacity.root.queues", "default");
    yc.set("yarn.scheduler.capacity.root.default.capacity", "100");
    yc.set("yarn.scheduler.capacity.maximum-am-resource-percent", "0.5");
    // Memory and vcores both bound a node, as graphene's plan of the run counts them (the
    // CapacityScheduler's default calculator counts memory alone).
    yc.set("yarn.scheduler.capacity.resource-calculator",
        "org.apache.hadoop.yarn.util.resource.DominantResourceCalculator");
    yc.setInt(YarnConfiguration.NM_PMEM_MB, o.nodeMemoryMb);
    // MiniYARNCluster gives each NodeManager this instead of NM_PMEM_MB (4096 MB by default).
    yc.setInt(YarnConfiguration.YARN_MINICLUSTER_NM_PMEM_MB, o.nodeMemoryMb);
    yc.setInt(YarnConfiguration.NM_VCORES, o.nodeVcores);
    yc.setInt(YarnConfiguration.RM_SCHEDULER_MINIMUM_ALLOCATION_MB, minAllocationMb(o));
    yc.setInt(YarnConfiguration.RM_SCHEDULER_MAXIMUM_ALLOCATION_MB, o.nodeMemoryMb);
    yc.setInt(YarnConfiguration.RM_SCHEDULER_MAXIMUM_ALLOCATION_VCORES, o.nodeVcores);
    // The sleep tasks' JVMs are small; the machine, not YARN's guess at it, is the limit.
    yc.setBoolean(YarnConfiguration.NM_PMEM_CHECK_ENABLED, false);
    yc.setBoolean(YarnConfiguration.NM_VMEM_CHECK_ENABLED, false);
    yc.set("fs.defaultFS", "file:///");
    // Tez's fetchers read map outputs through the NodeManagers' shuffle service; port 0: one
    // free port per NodeManager, all in this JVM.
    yc.set(YarnConfiguration.NM_AUX_SERVICES, "mapreduce_shuffle");
    yc.set("yarn.nodemanager.aux-services.mapreduce_shuffle.class", "org.apache.hadoop.mapred.ShuffleHandler");
    yc.setInt("mapreduce.shuffle.port", 0);
    // The NodeManagers launch the AM and task JVMs with this classpath: the runner's own (its
    // jar, Tez, Hadoop), so nothing is localized.
    // Absolute paths: the containers run in their own working directories.
    StringBuilder cp = new StringBuilder();
    for (String e : System.getProperty("java.class.path").split(File.pathSeparator)) {
      if (!e.isEmpty()) {
        cp.append(cp.length() == 0 ? "" : ",").append(new File(e).getAbsolutePath());
      }
    }
    yc.set(YarnConfiguration.YARN_APPLICATION_CLASSPATH, cp.toString());
    // MiniYARNCluster's working directories (NM local and log dirs) go under test.build.data.
    System.setProperty("test.build.data", new File(o.out, "yarn").getAbsolutePath());
    MiniYARNCluster cluster = new MiniYARNCluster("graphene-tez-run", o.nodes, 1, 1);
    cluster.init(yc);
    cluster.start();
    return cluster;
  }

  static String jvmOpts() {
    String v = System.getProperty("java.specification.version", "1.8");
    StringBuilder b = new StringBuilder("-XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Djava.net.preferIPv4Stack=true");
    if (!v.startsWith("1.")) {
      for (String p : new String[] {"java.lang", "java.lang.reflect", "java.util", "java.util.concurrent",
          "java.io", "java.nio", "java.net", "sun.nio.ch"}) {
        b.append(" --add-opens=java.base/").append(p).append("=ALL-UNNAMED");
      }
    }
    return b.toString();
  }

  /** One run with its own AM: {seconds, status, dag start epoch ms}. */
  static String[] runOnce(Options o, RunDag rd, String order, Configuration base, MiniYARNCluster cluster,
      File records, File amLog) throws Exception {
    TezConfiguration conf = new TezConfiguration(base);
    File staging = new File(o.out, "staging");
    Files.createDirectories(staging.toPath());
    conf.set(TezConfiguration.TEZ_AM_STAGING_DIR, staging.getAbsoluteFile().toURI().toString());
    conf.set("fs.defaultFS", "file:///");
    if (o.yarn) {
      conf.setBoolean(TezConfiguration.TEZ_LOCAL_MODE, false);
      conf.setBoolean(TezConfiguration.TEZ_IGNORE_LIB_URIS, true);
      conf.setBoolean(TezConfiguration.TEZ_USE_CLUSTER_HADOOP_LIBS, true);
      conf.setInt(TezConfiguration.TEZ_AM_RESOURCE_MEMORY_MB, AM_MB);
      conf.setInt(TezConfiguration.TEZ_AM_RESOURCE_CPU_VCORES, AM_VCORES);
    } else {
      conf.setBoolean(TezConfiguration.TEZ_LOCAL_MODE, true);
      conf.setBoolean("tez.runtime.optimize.local.fetch", true);
    }
    // A consumer is scheduled only once all its producers are done, as in graphene's model.
    conf.setFloat("tez.shuffle-vertex-manager.min-src-fraction", 1.0f);
    conf.setFloat("tez.shuffle-vertex-manager.max-src-fraction", 1.0f);
    // No records flow, but Tez still sizes every input's and output's buffers: each ordered
    // input asks for a share of the task's heap (fetch.buffer.percent, 0.9 by default) and the
    // task scales all requests down to fit, so a vertex with several ordered inputs and an
    // ordered output got a sort buffer of 0 MB and failed (IndexOutOfBoundsException in
    // PipelinedSorter), as WfCommons workflows' multi-parent vertices do. Small input shares
    // keep the sort buffer above zero for dozens of inputs.
    conf.setInt("tez.runtime.io.sort.mb", 16);
    conf.setFloat("tez.runtime.shuffle.fetch.buffer.percent", 0.02f);
    conf.setBoolean("tez.am.speculation.enabled", false);
    String scheduler = order.equals("graphene") ? GRAPHENE_SCHEDULER : NATURAL_SCHEDULER;
    conf.set(SCHEDULER_KEY, scheduler);
    String amOpts = jvmOpts();
    if (order.equals("graphene")) {
      String export = o.export.getAbsolutePath();
      conf.set(EXPORT_KEY, export);
      amOpts += " -Dgraphene.tez.export=" + export;
      if (!o.yarn) {
        System.setProperty("graphene.tez.export", export);
      }
    } else if (!o.yarn) {
      System.clearProperty("graphene.tez.export");
    }
    conf.set(TezConfiguration.TEZ_AM_LAUNCH_CMD_OPTS, amOpts);
    conf.set(TezConfiguration.TEZ_TASK_LAUNCH_CMD_OPTS, jvmOpts());
    if (o.historyDir != null) {
      conf.set(TezConfiguration.TEZ_HISTORY_LOGGING_SERVICE_CLASS,
          "org.apache.tez.dag.history.logging.impl.SimpleHistoryLoggingService");
      conf.set(TezConfiguration.TEZ_SIMPLE_HISTORY_LOGGING_DIR,
          o.historyDir.getAbsoluteFile().toURI().toString());
    }

    DAG dag = buildDag(o, rd, conf, records.getAbsolutePath());
    // Per DAG too: Tez local mode overwrites the AM-level scheduler class, a DAG's own conf wins.
    dag.setConf(SCHEDULER_KEY, scheduler);
    if (order.equals("graphene")) {
      // Where the plugin finds the export: the DAG's configuration, as a platform sets it.
      dag.setConf(EXPORT_KEY, o.export.getAbsolutePath());
    }

    LogCapture capture = o.yarn ? null : LogCapture.install();
    TezClient client = TezClient.newBuilder("graphene-" + rd.name + "-" + order, conf).setIsSession(false).build();
    long start;
    String status;
    long end;
    try {
      client.start();
      start = System.currentTimeMillis();
      DAGClient dc = client.submitDAG(dag);
      DAGStatus st = waitFor(dc, start + o.timeoutS * 1000L);
      end = System.currentTimeMillis();
      if (st == null) {
        status = "TIMEOUT";
        try {
          dc.tryKillDAG();
        } catch (Exception e) {
          // reported as TIMEOUT anyway
        }
      } else {
        status = st.getState().toString();
        if (st.getState() != DAGStatus.State.SUCCEEDED) {
          System.err.println("tez-run: diagnostics: " + String.join("\n", st.getDiagnostics()));
        }
      }
      String appId = client.getAppMasterApplicationId() == null ? null
          : client.getAppMasterApplicationId().toString();
      client.stop();
      if (capture != null) {
        capture.writeTo(amLog);
      } else {
        collectAmLog(cluster, appId, amLog);
      }
    } finally {
      if (capture != null) {
        capture.remove();
      }
    }
    return new String[] {String.format(Locale.ROOT, "%.3f", (end - start) / 1000.0), status, Long.toString(start)};
  }

  static DAGStatus waitFor(DAGClient dc, long deadline) throws Exception {
    while (System.currentTimeMillis() < deadline) {
      DAGStatus st = dc.getDAGStatus(EnumSet.noneOf(StatusGetOpts.class));
      if (st.isCompleted()) {
        return st;
      }
      Thread.sleep(200);
    }
    return null;
  }

  static DAG buildDag(Options o, RunDag rd, Configuration conf, String recordDir) throws IOException {
    DAG dag = DAG.create(rd.name);
    Map<String, Vertex> vertices = new HashMap<>();
    for (RunDag.Stage s : rd.stages.values()) {
      String payload = SleepProcessor.payload(recordDir, durationsMs(o, s));
      ProcessorDescriptor pd = ProcessorDescriptor.create(SleepProcessor.class.getName())
          .setUserPayload(UserPayload.create(java.nio.ByteBuffer.wrap(payload.getBytes(StandardCharsets.UTF_8))));
      Vertex v = Vertex.create(s.id, pd, s.durations.length, resourceOf(o, s));
      vertices.put(s.id, v);
      dag.addVertex(v);
    }
    for (RunDag.Stage s : rd.stages.values()) {
      for (RunDag.Parent p : s.parents) {
        Edge e;
        if (p.oneToOne) {
          UnorderedKVEdgeConfig c = UnorderedKVEdgeConfig.newBuilder(Text.class.getName(), Text.class.getName())
              .setFromConfiguration(conf).build();
          e = Edge.create(vertices.get(p.stage), vertices.get(s.id), c.createDefaultOneToOneEdgeProperty());
        } else {
          OrderedPartitionedKVEdgeConfig c = OrderedPartitionedKVEdgeConfig
              .newBuilder(Text.class.getName(), Text.class.getName(), HashPartitioner.class.getName())
              .setFromConfiguration(conf).build();
          e = Edge.create(vertices.get(p.stage), vertices.get(s.id), c.createDefaultEdgeProperty());
        }
        dag.addEdge(e);
      }
    }
    return dag;
  }

  /** Adds the run's task records to tasks.csv, in seconds from the DAG's submission. */
  static void appendTasks(StringBuilder csv, String order, int run, File records, long start) throws IOException {
    File[] files = records.listFiles((d, n) -> n.endsWith(".tsv"));
    if (files == null) {
      return;
    }
    List<String[]> rows = new ArrayList<>();
    for (File f : files) {
      String line = new String(Files.readAllBytes(f.toPath()), StandardCharsets.UTF_8).trim();
      String[] p = line.split("\t");
      if (p.length == 7) {
        rows.add(p);
      }
    }
    rows.sort((a, b) -> Long.compare(Long.parseLong(a[5]), Long.parseLong(b[5])));
    for (String[] p : rows) {
      csv.append(order).append(',').append(run).append(',').append(csvField(p[0])).append(',').append(p[1])
          .append(',').append(csvField(p[3])).append(',').append(csvField(p[4])).append(',')
          .append(seconds(Long.parseLong(p[5]) - start)).append(',').append(seconds(Long.parseLong(p[6]) - start))
          .append('\n');
    }
  }

  static String seconds(long ms) {
    return String.format(Locale.ROOT, "%.3f", ms / 1000.0);
  }

  static String csvField(String s) {
    if (s.contains(",") || s.contains("\"")) {
      return "\"" + s.replace("\"", "\"\"") + "\"";
    }
    return s;
  }

  static void writeAtomic(File f, String text) throws IOException {
    File tmp = new File(f.getParentFile(), "." + f.getName() + ".tmp");
    Files.write(tmp.toPath(), text.getBytes(StandardCharsets.UTF_8));
    Files.move(tmp.toPath(), f.toPath(), StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
  }

  static void deleteTree(Path p) throws IOException {
    if (!Files.exists(p)) {
      return;
    }
    try (Stream<Path> s = Files.walk(p)) {
      List<Path> all = new ArrayList<>();
      s.forEach(all::add);
      all.sort((a, b) -> b.getNameCount() - a.getNameCount());
      for (Path x : all) {
        Files.delete(x);
      }
    }
  }

  /** Keeps the AM's lines about its DAG scheduler: DAGImpl's and the plugin's. */
  static boolean relevant(String line) {
    return line.contains("Using DAG Scheduler") || line.contains("GrapheneDAGScheduler")
        || line.contains("graphene-tez:");
  }

  /** On a MiniYARNCluster: the AM container's syslog files, from the NodeManagers' log directories. */
  static void collectAmLog(MiniYARNCluster cluster, String appId, File amLog) throws IOException {
    List<String> keep = new ArrayList<>();
    if (appId != null && cluster != null) {
      String attempt = "container_" + appId.substring("application_".length()) + "_01_000001";
      try (Stream<Path> s = Files.walk(cluster.getTestWorkDir().toPath())) {
        for (Path p : (Iterable<Path>) s::iterator) {
          // syslog, then syslog_dag_* once the DAG runs: all of the AM container's logs.
          if (p.getFileName().toString().startsWith("syslog") && p.getParent() != null
              && p.getParent().getFileName().toString().equals(attempt)) {
            for (String line : Files.readAllLines(p, StandardCharsets.UTF_8)) {
              if (relevant(line)) {
                keep.add(line);
              }
            }
          }
        }
      }
    }
    if (keep.isEmpty()) {
      keep.add("tez-run: no AM log found for " + appId);
    }
    writeAtomic(amLog, String.join("\n", keep) + "\n");
  }

  /** In local mode the AM runs in this JVM: its log lines are caught here. */
  static final class LogCapture extends AppenderSkeleton {
    private final List<String> lines = new ArrayList<>();

    static LogCapture install() {
      LogCapture c = new LogCapture();
      org.apache.log4j.Logger.getRootLogger().addAppender(c);
      return c;
    }

    void remove() {
      org.apache.log4j.Logger.getRootLogger().removeAppender(this);
    }

    @Override
    protected synchronized void append(LoggingEvent e) {
      String line = e.getLevel() + " [" + e.getLoggerName() + "] " + e.getRenderedMessage();
      if (e.getLoggerName().startsWith("org.graphene.tez.") && !e.getLoggerName().startsWith("org.graphene.tez.run.")) {
        lines.add(line);
        return;
      }
      if (relevant(line)) {
        lines.add(line);
      }
    }

    synchronized void writeTo(File f) throws IOException {
      List<String> copy = new ArrayList<>(lines);
      if (copy.isEmpty()) {
        copy.add("tez-run: no AM log line about the DAG scheduler");
      }
      writeAtomic(f, String.join("\n", copy) + "\n");
    }

    @Override
    public void close() {}

    @Override
    public boolean requiresLayout() {
      return false;
    }
  }
}
