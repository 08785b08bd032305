package org.graphene.sls;

import java.io.IOException;
import java.security.PrivilegedExceptionAction;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.security.token.Token;
import org.apache.hadoop.yarn.api.protocolrecords.AllocateRequest;
import org.apache.hadoop.yarn.api.protocolrecords.AllocateResponse;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerExitStatus;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.ContainerStatus;
import org.apache.hadoop.yarn.api.records.ExecutionType;
import org.apache.hadoop.yarn.api.records.ReservationId;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.security.AMRMTokenIdentifier;
import org.apache.hadoop.yarn.server.resourcemanager.ResourceManager;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.ResourceScheduler;
import org.apache.hadoop.yarn.sls.AMDefinition;
import org.apache.hadoop.yarn.sls.SLSRunner;
import org.apache.hadoop.yarn.sls.appmaster.AMSimulator;
import org.apache.hadoop.yarn.sls.nodemanager.NMSimulator;
import org.apache.hadoop.yarn.sls.scheduler.ContainerSimulator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An SLS application master that runs one graphene job as a DAG: one container request per
 * task, at the task's priority and size from graphene's export, sent only once every parent of
 * the task has finished (all-to-all and one-to-one edges).
 *
 * <p>Registered with SLS's own extension point, {@code yarn.sls.am.type.graphene} =
 * {@code org.graphene.sls.GrapheneAMSimulator} in {@code sls-runner.xml}; trace jobs with
 * {@code "am.type": "graphene"} get it. Hadoop 3.4.2's SLS cannot read SLS-format jobs with
 * tasks (see {@link GrapheneTrace}), so runs give SLS Rumen stand-ins, whose fixed type
 * {@code mapreduce} is mapped to this class too, and the AM reads its job from graphene's trace
 * ({@code yarn.sls.graphene.trace.file}); it submits at the job's arrival itself, because SLS
 * starts every Rumen job at 0. SLS's stock AMs do not fit: {@code MRAMSimulator}
 * knows two phases and overwrites every container's priority with its fixed map/reduce
 * priorities, and {@code DAGAMSimulator} releases requests by a fixed delay, not by parents.
 *
 * <p>Each task's request carries its trace position as the YARN {@code allocationRequestId}
 * (YARN-4889), so every container the scheduler hands back names the task it was granted for;
 * the AM never has to guess from priorities, which may repeat (e.g. with {@code --levels}).
 *
 * <p>A job the AM cannot run (a task larger than every node or than the scheduler's maximum
 * allocation, an unknown queue, a malformed task entry, a missing parent) is reported, as a
 * {@code skip} line in the event log and an error in SLS's log, by throwing from
 * {@link #init}: SLS's {@code AMRunner} catches it per job, leaves the job out of the run and
 * goes on with the next one.
 */
public class GrapheneAMSimulator extends AMSimulator {
  private static final Logger LOG = LoggerFactory.getLogger(GrapheneAMSimulator.class);

  /** The am.type this class is registered under (yarn.sls.am.type.graphene). */
  public static final String AM_TYPE = "graphene";

  private JobDag dag;
  private String jobName;
  private long arrivalMs;
  private EventLog events;

  /** Tasks ready (every parent finished) whose request has not been sent yet. */
  private final List<JobDag.Task> toRequest = new ArrayList<>();
  /** Requested, no container yet, by task number. */
  private final Map<Integer, JobDag.Task> pending = new HashMap<>();
  private final Map<ContainerId, JobDag.Task> running = new HashMap<>();
  private final List<ContainerId> toRelease = new ArrayList<>();
  private boolean isFinished = false;
  /**
   * Allocate calls sent so far, and the call each queued response answered: a container that
   * comes back in the answer to call n was allocated before call n returned, so only requests
   * sent in calls before n were surely pending at the RM when it was allocated. The event log
   * keeps both numbers so the priority-order check never blames a request the RM had not seen.
   */
  private int calls = 0;
  private final java.util.concurrent.BlockingQueue<Integer> responseCalls =
      new java.util.concurrent.LinkedBlockingQueue<>();
  /** When SLS started this AM's task (the job's start in SLS's trace). */
  private long traceStartMs;
  /** Wall-clock time the application is submitted at; -1 once it is. */
  private long submitAtWall = -1;

  @Override
  @SuppressWarnings("checkstyle:parameternumber")
  public void init(AMDefinition amDef, ResourceManager rm, SLSRunner slsRunner, boolean tracked,
      long baselineTimeMS, long heartbeatInterval, Map<ApplicationId, AMSimulator> appIdToAMSim) {
    super.init(amDef, rm, slsRunner, tracked, baselineTimeMS, heartbeatInterval, appIdToAMSim);
    this.amtype = AM_TYPE;
    this.jobName = amDef.getOldAppId() == null ? "job" : amDef.getOldAppId();
    this.arrivalMs = amDef.getJobStartTime();
    this.traceStartMs = amDef.getJobStartTime();
    org.apache.hadoop.conf.Configuration conf = slsRunner.getConf();
    this.events = EventLog.open(conf == null ? null
        : conf.get(EventLog.FILE_KEY, System.getProperty(EventLog.FILE_KEY)));
    String traceFile = conf == null ? null : conf.get(GrapheneTrace.FILE_KEY);
    try {
      List<JobDag.TaskIn> in = new ArrayList<>();
      if (traceFile != null && !traceFile.isEmpty()) {
        // Rumen stand-in (see GrapheneTrace): the job comes from graphene's own trace.
        GrapheneTrace.Job job = GrapheneTrace.load(traceFile).byRumenId(amDef.getOldAppId());
        this.jobName = job.name;
        this.arrivalMs = job.startMs;
        if (!job.queue.equals(queue)) {
          throw new IllegalArgumentException("queue '" + queue + "' of the Rumen stand-in "
              + "differs from job.queue.name '" + job.queue + "'");
        }
        in.addAll(job.tasks);
      } else {
        for (ContainerSimulator c : amDef.getTaskContainers()) {
          Resource r = c.getResource();
          in.add(new JobDag.TaskIn(c.getType(), c.getPriority(), r.getVirtualCores(),
              r.getMemorySize(), c.getLifeTime()));
        }
      }
      this.dag = JobDag.parse(in);
      checkQueue(rm.getResourceScheduler(), queue);
      checkFits(rm.getResourceScheduler(), slsRunner.getNmMap().values(), queue, dag);
    } catch (RuntimeException | IOException e) {
      String reason = e.getMessage();
      if (events != null) {
        events.write("skip", jobName, "", arrivalMs, "", null, null, null, "", "", reason);
      }
      LOG.error("graphene AM: job {} is skipped: {}", jobName, reason);
      throw new IllegalArgumentException("graphene AM: job " + jobName + ": " + reason, e);
    }
    this.totalContainers = dag.size();
    toRequest.addAll(dag.initiallyReady());
  }

  /** The queue must exist: a submission to an unknown queue is rejected by the RM. */
  static void checkQueue(ResourceScheduler scheduler, String queue) throws IOException {
    if (queue == null || queue.isEmpty()) {
      throw new IllegalArgumentException("job.queue.name is missing");
    }
    try {
      scheduler.getQueueInfo(queue, false, false);
    } catch (IOException | RuntimeException e) {
      throw new IllegalArgumentException("job.queue.name '" + queue
          + "': no such queue in the scheduler (" + e.getMessage() + ")");
    }
  }

  /**
   * Every task must fit the scheduler's maximum allocation and at least one node, or its
   * request would be refused (InvalidResourceRequestException) or wait forever.
   */
  static void checkFits(ResourceScheduler scheduler, Iterable<NMSimulator> nodes, String queue,
      JobDag dag) {
    Resource max = scheduler.getMaximumResourceCapability(queue);
    long bigV = 0;
    long bigM = 0;
    List<Resource> caps = new ArrayList<>();
    for (NMSimulator nm : nodes) {
      Resource c = nm.getNode().getTotalCapability();
      caps.add(c);
      bigV = Math.max(bigV, c.getVirtualCores());
      bigM = Math.max(bigM, c.getMemorySize());
    }
    for (JobDag.Task t : dag.tasks()) {
      if (max != null && (t.vcores > max.getVirtualCores() || t.memoryMb > max.getMemorySize())) {
        throw new IllegalArgumentException("task " + t.id() + " (job.tasks[" + t.number
            + "]) asks for " + t.vcores + " vcores, " + t.memoryMb + " MB: more than the "
            + "scheduler's maximum allocation (" + max.getVirtualCores() + " vcores, "
            + max.getMemorySize() + " MB)");
      }
      boolean fits = false;
      for (Resource c : caps) {
        if (t.vcores <= c.getVirtualCores() && t.memoryMb <= c.getMemorySize()) {
          fits = true;
          break;
        }
      }
      if (!fits) {
        throw new IllegalArgumentException("task " + t.id() + " (job.tasks[" + t.number
            + "]) asks for " + t.vcores + " vcores, " + t.memoryMb + " MB: larger than any "
            + "node (the largest has " + bigV + " vcores, " + bigM + " MB)");
      }
    }
  }

  /**
   * SLS starts the task at the start its trace gives; a Rumen stand-in starts at 0 (AMRunner
   * passes baseline 0 and AMDefinitionRumen then rebases each job on its own submit time), so
   * the application is submitted at the graphene trace's arrival instead, counted from here.
   */
  @Override
  public void firstStep() throws Exception {
    submitAtWall = System.currentTimeMillis() + Math.max(0, arrivalMs - traceStartMs);
    maybeSubmit();
  }

  @Override
  public void middleStep() throws Exception {
    if (submitAtWall >= 0) {
      maybeSubmit();
      return;
    }
    super.middleStep();
  }

  private void maybeSubmit() throws Exception {
    if (System.currentTimeMillis() < submitAtWall) {
      return;
    }
    submitAtWall = -1;
    super.firstStep();
    if (events != null) {
      events.write("arrive", jobName, String.valueOf(appId), arrivalMs, "", null, null, null,
          "", "", queue);
    }
  }

  @Override
  public void initReservation(ReservationId reservationId, long deadline, long now) {
    // Graphene jobs make no reservations.
    setReservationRequest(null);
  }

  @Override
  protected void processResponseQueue() throws Exception {
    while (!responseQueue.isEmpty()) {
      AllocateResponse response = responseQueue.take();
      Integer call = responseCalls.poll();
      String callTag = "call=" + (call == null ? -1 : call);
      for (ContainerStatus cs : response.getCompletedContainersStatuses()) {
        ContainerId id = cs.getContainerId();
        JobDag.Task t = running.remove(id);
        if (t == null) {
          // The AM's own container (AMSimulator keeps it package-private) or a container
          // released unused: neither is a task.
          continue;
        }
        if (cs.getExitStatus() == ContainerExitStatus.SUCCESS) {
          log("end", t, null, id, callTag);
          finishedContainers++;
          toRequest.addAll(dag.finish(t.number));
        } else {
          // Preempted or lost with its node: the task runs again, at the same priority.
          log("killed", t, null, id, callTag);
          toRequest.add(t);
        }
      }
      for (Container c : response.getAllocatedContainers()) {
        JobDag.Task t = pending.remove((int) c.getAllocationRequestId());
        if (t == null) {
          // Not for a request of ours that is still open: give it back.
          toRelease.add(c.getId());
          continue;
        }
        running.put(c.getId(), t);
        se.getNmMap().get(c.getNodeId()).addNewContainer(c, t.durationMs, appId);
        getRanNodes().add(c.getNodeId());
        log("start", t, c.getNodeId().getHost(), c.getId(), callTag);
      }
    }
    if (!isFinished && dag.allFinished()) {
      isFinished = true;
      if (events != null) {
        events.write("done", jobName, String.valueOf(appId), arrivalMs, "", null, null, null,
            "", "", "");
      }
      // checkStop() now ends the task: SLS's runner calls lastStep(), which unregisters the
      // application and reports it to jobruntime.csv.
    }
  }

  private void log(String event, JobDag.Task t, String node, ContainerId id, String detail) {
    if (events != null) {
      events.write(event, jobName, String.valueOf(appId), arrivalMs, t.id(), t.priority,
          t.vcores, t.memoryMb, node == null ? "" : node, id == null ? "" : id.toString(),
          detail);
    }
  }

  @Override
  protected void sendContainerRequest() throws Exception {
    if (isFinished) {
      return;
    }
    List<ResourceRequest> ask = new ArrayList<>();
    int call = ++calls;
    for (JobDag.Task t : toRequest) {
      Resource cap = Resource.newInstance(t.memoryMb, (int) t.vcores);
      ask.add(createResourceRequest(cap, ExecutionType.GUARANTEED, ResourceRequest.ANY,
          t.priority, t.number, 1));
      pending.put(t.number, t);
      log("request", t, null, null, "call=" + call);
    }
    toRequest.clear();
    final AllocateRequest request = createAllocateRequest(ask, new ArrayList<>(toRelease));
    toRelease.clear();
    request.setProgress(totalContainers == 0 ? 1.0f : (float) finishedContainers / totalContainers);
    UserGroupInformation ugi = UserGroupInformation.createRemoteUser(appAttemptId.toString());
    Token<AMRMTokenIdentifier> token = rm.getRMContext().getRMApps()
        .get(appAttemptId.getApplicationId()).getRMAppAttempt(appAttemptId).getAMRMToken();
    ugi.addTokenIdentifier(token.decodeIdentifier());
    AllocateResponse response = ugi.doAs((PrivilegedExceptionAction<AllocateResponse>) () ->
        rm.getApplicationMasterService().allocate(request));
    if (events != null) {
      // When the RM had taken this call's asks: a container it allocated before then may have
      // been placed without seeing them (scripts/check-sls-run).
      events.write("answer", jobName, String.valueOf(appId), arrivalMs, "", null, null, null,
          "", "", "call=" + call);
    }
    if (response != null) {
      responseCalls.put(call);
      responseQueue.put(response);
    }
  }

  @Override
  protected void checkStop() {
    if (isFinished) {
      super.setEndTime(System.currentTimeMillis());
    }
  }

  /** The job's DAG as the AM read it (tests). */
  public JobDag dag() {
    return dag;
  }
}
