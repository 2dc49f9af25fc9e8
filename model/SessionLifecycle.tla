-------------------------- MODULE SessionLifecycle --------------------------
(***************************************************************************)
(* One agent-tty session and every process that touches its files: create, *)
(* the host, the program's process group, one other command that          *)
(* reconciles (list, inspect), one gc pass and one destroy (plain or       *)
(* --force, from outside or from inside the program's session).            *)
(*                                                                         *)
(* Each action is one indivisible step of our code: one read, one rename,  *)
(* one rmtree, one signal, or a block of the single-threaded host that     *)
(* makes at most one write. The comment above each action names the Python *)
(* function it stands for. Guards are constants: TRUE in the code as it is *)
(* (model/facts.py reads each from the code), FALSE in the mutant run that *)
(* shows the rule it keeps can break.                                      *)
(***************************************************************************)
EXTENDS Naturals

CONSTANTS
    \* ---- the environment
    Token,          \* program.json carries a proof beyond the leader (autogroup token)
    Cgroup,         \* linux_cgroup: a leaf per session, atomic cgroup.kill, populated
    Unseen,         \* the leftover is a fork chain that no /proc scan shows
    ZombiesInView,  \* a PID 1 that never reaps: a fork chain leaves zombies in view
    OtherSpace,     \* destroy, list and gc run in another pid space than the host
    LeafUnseen,     \* with Cgroup: destroy, list and gc run in another cgroup namespace than
                    \* the host, where the leaf's recorded path is missing while the leaf runs
    Foreign,        \* a process of another user may join the group (sudo cmd &)
    CheckFails,     \* every read of program.json by destroy, list and gc fails while it exists
                    \* (EACCES, EIO: an errno no retry changes, UNREADABLE_ERRNOS)
    Refused,        \* the /proc of destroy, list and gc refuses the program's autogroup
    Win32,          \* SIGTERM ends the host at once, as on Windows
    DestroyKinds,   \* subset of {"plain", "force"}
    DestroyPlaces,  \* subset of {"outside", "inside"}
    Reconciles,     \* rounds of the other command
    Resize,         \* a resize command reaches the host
    \* ---- the guards (model/facts.py reads each from the code)
    CreateRecordsHostPid, HostWaitsForManifest, ReconcileRereads,
    ReconcileSkipsLiveHost, HostStopsAfterTerminalWrite, DestroyRecordsDestroyed,
    DestroyKeepsExitCode, ManifestWriteNeedsFolder, KillsProgramGroup,
    ProbeCountsDeniedGroup, HostWaitsForGroup, ReconcileWaitsForGroup,
    ReRunsInNewSession, InsideCheckReadsEnv, RecordsProgramSync,
    ProvesGroupOwnership, DestroyStopsLeftovers, CreateStopsOnGiveUp,
    HostChecksCreateFailed, ReconcileRepairsDestroyed, ReconcileRepairsMarked,
    TokenNamesProgram, UnsharedGroupReadsUnknown, GcKeepsLiveGroup,
    CreateRecordsHost, ReusedIdReadsGone, ProvesHostPid, FreezesUnseenGroup,
    GcProbesUnseenGroup, GcFreezesUnseenGroup, GcSkipsNonCollectable,
    GcFinalCheck, ShutdownChecksCommandable, ReconcileRecordsExit,
    MissingLeafNeedsSameRoot, ForceSkipsUnreadableGroup, ReconcileSkipsTerminal,
    HostSerializesWrites

VARIABLES
    \* ---- the session folder
    folder, mf, hostJson, programJson, markDestroyed, markCreateFailed, sock,
    \* ---- the program's process group
    leader, leftover, foreign, foreignUsed, reused, tokenOk,
    \* ---- the host: its place, its in-memory manifest and shutdown state
    hpc, hAlive, hPidReused, hMf, hExit, hShutdown, hTimer, hWait, hResized,
    termSent, destroyReq, destroyHandled, hLate,
    \* ---- create, the other command, gc, destroy
    cpc, cGaveUp,
    opc, oCopy, oRound,
    gpc, gDestroyed,
    dpc, dKind, dInside, dRerun, dCopy, dResult, dSaw,
    \* ---- history, for the rules
    everTerminal, everNamed, exitRecorded, removedOnce, gcRemovedLive,
    unrelatedKilled, unrelatedHostKilled, exitedOnOwn, destroyKilled,
    hostFailedStart, groupSignalled, waitPassedReused, repaired, leftoverKilled

folderVars == <<folder, mf, hostJson, programJson, markDestroyed, markCreateFailed, sock>>
groupVars == <<leader, leftover, foreign, foreignUsed, reused, tokenOk>>
hostVars == <<hpc, hAlive, hPidReused, hMf, hExit, hShutdown, hTimer, hWait, hResized,
              termSent, destroyReq, destroyHandled, hLate>>
createVars == <<cpc, cGaveUp>>
otherVars == <<opc, oCopy, oRound>>
gcVars == <<gpc, gDestroyed>>
destroyVars == <<dpc, dKind, dInside, dRerun, dCopy, dResult, dSaw>>
historyVars == <<everTerminal, everNamed, exitRecorded, removedOnce, gcRemovedLive,
                 unrelatedKilled, unrelatedHostKilled, exitedOnOwn, destroyKilled,
                 hostFailedStart, groupSignalled, waitPassedReused, repaired, leftoverKilled>>
vars == <<folderVars, groupVars, hostVars, createVars, otherVars, gcVars, destroyVars, historyVars>>

-----------------------------------------------------------------------------
(* Statuses and the policy table (agent_tty/protocol/status.py STATUS_POLICY) *)

Statuses == {"none", "running", "exiting", "destroying", "exited", "failed", "destroyed"}
Active(s) == s \in {"running", "exiting", "destroying"}
Terminal(s) == s \in {"exited", "failed", "destroyed"}
Commandable(s) == s = "running"
Collectable(s) == Terminal(s)

\* A manifest: its status, whether it names the host (hostPid) and the program (childPid),
\* whether it records the program's exit code, and whether it says "host-death".
Manifest == [status : Statuses, host : BOOLEAN, child : BOOLEAN, exit : BOOLEAN, death : BOOLEAN]
NoManifest == [status |-> "none", host |-> FALSE, child |-> FALSE, exit |-> FALSE, death |-> FALSE]

-----------------------------------------------------------------------------
(* The program's group, as a view sees it *)

Members == leader = "runs" \/ leftover \/ foreign

\* The host holds its group in memory; a CLI only through program.json.
HasRecord(view) == view = "host" \/ programJson
OwnSpace(view) == view = "host" \/ ~OtherSpace

(* linux_cgroup: the host made the leaf in its own view of cgroupfs. A CLI in another cgroup
   namespace (LeafUnseen) resolves the recorded path from another root: it finds nothing there
   while the leaf runs. _gone_leaf reads a missing path gone only from the root the path was
   recorded against (MissingLeafNeedsSameRoot); otherwise the CLI judges by the token. *)
SeesLeaf(view) == Cgroup /\ (view = "host" \/ ~LeafUnseen)
MissingReadsGone(view) == Cgroup /\ ~SeesLeaf(view) /\ ~MissingLeafNeedsSameRoot
ByToken(view) == ~SeesLeaf(view) /\ ~MissingReadsGone(view)

(* Platform.judge_group: linux_cgroup's leaf (_verdict), or linux_autogroup's _judge (token) and
   _judge_leader (no token). "none": no record, nothing to judge. *)
Verdict(view) ==
    IF ~HasRecord(view) THEN "none"
    ELSE IF SeesLeaf(view) THEN (IF Members THEN "owned" ELSE "gone")
    ELSE IF MissingReadsGone(view) THEN "gone"
    ELSE IF ~OwnSpace(view) THEN (IF UnsharedGroupReadsUnknown THEN "unshared" ELSE "gone")
    ELSE IF ~KillsProgramGroup THEN (IF leader = "runs" THEN "owned" ELSE "gone")
    ELSE IF Token THEN
        \* Refused: a live member whose autogroup the CLI may not read: "cannot tell"
        IF Refused /\ view = "cli" /\ (leader = "runs" \/ (leftover /\ ~Unseen) \/ foreign \/ reused)
        THEN "unknown"
        ELSE IF ~tokenOk
        THEN (IF leader = "runs" \/ (leftover /\ ~Unseen) \/ foreign \/ reused THEN "unproven" ELSE "gone")
        ELSE IF leader = "runs" \/ (leftover /\ ~Unseen) \/ foreign THEN "owned"
        ELSE IF reused THEN "unproven"
        ELSE "gone"
    ELSE IF leader = "runs" THEN "owned"
    ELSE IF reused THEN "unproven"
    ELSE IF foreign \/ (leftover /\ ~Unseen) THEN "unknown"
    ELSE "gone"

\* CheckFails: Engine.group raises for destroy, list and gc while program.json exists
GroupReadFails(view) == CheckFails /\ view = "cli" /\ programJson

\* linux_autogroup _frozen_judgement: SIGSTOP to the id holds a fork chain in view.
FrozenOwned(view) ==
    /\ Token /\ tokenOk /\ ByToken(view) /\ OwnSpace(view) /\ KillsProgramGroup
    /\ leftover /\ Unseen

(* Platform.group_alive: the verdict, then kill(-pgid, 0) when nothing is in view. *)
Alive(view) ==
    LET v == Verdict(view) IN
    IF v = "none" THEN FALSE
    ELSE IF v \in {"owned", "unshared"} THEN TRUE
    ELSE IF v = "unknown" THEN ProbeCountsDeniedGroup
    ELSE IF v = "unproven" THEN ~ReusedIdReadsGone
    ELSE IF ~ByToken(view) \/ ~KillsProgramGroup \/ ~OwnSpace(view) THEN FALSE
    ELSE IF ~leftover THEN FALSE
    \* the probe finds the unseen chain: GcFreezesUnseenGroup stops and judges it, else
    \* two scans that show only zombies read it ended
    ELSE IF Token /\ GcFreezesUnseenGroup THEN tokenOk
    ELSE ~ZombiesInView

(* gc._group_runs *)
GcSeesGroupRuns ==
    LET v == Verdict("cli") IN
    v = "owned" \/ (GcProbesUnseenGroup /\ v = "gone" /\ Alive("cli"))

KillGroupChanges == <<leader, leftover, foreign, groupSignalled, unrelatedKilled, leftoverKilled>>

KillMembers(view) ==
    /\ leader' = IF leader = "runs" THEN "ended" ELSE leader
    /\ leftover' = (leftover /\ ~KillsProgramGroup)
    /\ foreign' = (foreign /\ ~(SeesLeaf(view) /\ KillsProgramGroup))  \* cgroup.kill reaches every uid
    /\ groupSignalled' = TRUE
    \* a kill that reached what the program left while nothing else of the group was in view
    /\ leftoverKilled' = (leftoverKilled \/ (leftover /\ leader # "runs" /\ ~foreign /\ KillsProgramGroup))

(* Platform.kill_group(SIGKILL): linux_autogroup _signal_proven, linux_cgroup _kill_leaf.
   Without ProvesGroupOwnership the kill goes to the recorded id, whoever holds it now. *)
KillGroup(view) ==
    IF ~ProvesGroupOwnership /\ HasRecord(view) /\ OwnSpace(view)
    THEN /\ KillMembers(view)
         /\ unrelatedKilled' = (unrelatedKilled \/ (reused /\ ~Members))
    ELSE IF Verdict(view) = "owned" \/ (Verdict(view) = "gone" /\ FreezesUnseenGroup /\ FrozenOwned(view))
    THEN KillMembers(view) /\ UNCHANGED unrelatedKilled
    ELSE UNCHANGED KillGroupChanges

-----------------------------------------------------------------------------
(* The host as a CLI sees it: Engine.judge_host with linux_*'s _judge_host *)

HostVerdict(copy) ==
    IF ~copy.host THEN "unknown"              \* a null hostPid is no proof
    ELSE IF OtherSpace THEN (IF hostJson THEN "unknown" ELSE "dead")
    ELSE IF hAlive THEN "alive"
    ELSE IF ~hostJson /\ hPidReused THEN "unknown"
    ELSE "dead"

HostMayWrite ==
    hAlive /\ hpc \in {"identity", "check1", "spawn", "program", "startup", "check2",
                       "listen", "loop", "waitgroup", "marker", "final"}

-----------------------------------------------------------------------------
(* Writes: storage/files.py write_record / write_marker (temp file and rename). *)

\* ManifestWriteNeedsFolder: no mkdir on the write path, so a removed folder stays removed.
CanWrite == folder \/ ~ManifestWriteNeedsFolder

WriteMf(new) ==
    /\ mf' = new
    /\ folder' = TRUE
    /\ everTerminal' = (everTerminal \/ Terminal(new.status))
    /\ everNamed' = (everNamed \/ new.child)
    /\ exitRecorded' = (exitRecorded \/ new.exit)

mfVars == <<folder, mf, everTerminal, everNamed, exitRecorded>>

\* Engine.record_destroyed's record: from the caller's copy, exit code kept (DestroyKeepsExitCode)
DestroyedFrom(copy) ==
    [copy EXCEPT !.status = "destroyed", !.death = FALSE, !.exit = (copy.exit /\ DestroyKeepsExitCode)]

-----------------------------------------------------------------------------
Init ==
    /\ folder = TRUE /\ mf = NoManifest      \* create._allocate made the folder
    /\ hostJson = FALSE /\ programJson = FALSE /\ markDestroyed = FALSE
    /\ markCreateFailed = FALSE /\ sock = FALSE
    /\ leader = "unborn" /\ leftover = FALSE /\ foreign = FALSE /\ foreignUsed = FALSE
    /\ reused = FALSE /\ tokenOk = TRUE
    /\ hpc = "none" /\ hAlive = FALSE /\ hPidReused = FALSE /\ hMf = NoManifest
    /\ hExit = FALSE /\ hShutdown = "none" /\ hTimer = FALSE /\ hWait = "none"
    /\ hResized = FALSE /\ termSent = FALSE /\ destroyReq = FALSE /\ destroyHandled = FALSE
    /\ hLate = FALSE
    /\ cpc = "launch" /\ cGaveUp = FALSE
    /\ opc = "read" /\ oCopy = NoManifest /\ oRound = 0
    /\ gpc = "read" /\ gDestroyed = FALSE
    /\ dpc = "idle" /\ dKind \in DestroyKinds /\ dInside \in {p = "inside" : p \in DestroyPlaces}
    /\ dRerun = FALSE /\ dCopy = NoManifest /\ dResult = "none" /\ dSaw = FALSE
    /\ everTerminal = FALSE /\ everNamed = FALSE /\ exitRecorded = FALSE
    /\ removedOnce = FALSE /\ gcRemovedLive = FALSE /\ unrelatedKilled = FALSE
    /\ unrelatedHostKilled = FALSE /\ exitedOnOwn = FALSE /\ destroyKilled = FALSE
    /\ hostFailedStart = FALSE /\ groupSignalled = FALSE /\ waitPassedReused = FALSE
    /\ repaired = FALSE /\ leftoverKilled = FALSE

-----------------------------------------------------------------------------
(* create: agent_tty/lifecycle/create.py *)

\* create: _launch_host, before any manifest write (CreateRecordsHostPid)
CreateLaunchesHost ==
    /\ cpc = "launch"
    /\ hpc' = "wait" /\ hAlive' = TRUE
    /\ cpc' = IF CreateRecordsHost THEN "hostjson" ELSE "manifest"
    /\ UNCHANGED <<folderVars, groupVars, hPidReused, hLate, hMf, hExit, hShutdown, hTimer, hWait,
                   hResized, termSent, destroyReq, destroyHandled, cGaveUp, otherVars, gcVars,
                   destroyVars, historyVars>>

\* create: write_record(paths.host, ...) right after the launch (CreateRecordsHost)
CreateWritesHostJson ==
    /\ cpc = "hostjson"
    /\ hostJson' = folder
    /\ cpc' = "manifest"
    /\ UNCHANGED <<folder, mf, programJson, markDestroyed, markCreateFailed, sock, groupVars,
                   hostVars, cGaveUp, otherVars, gcVars, destroyVars, historyVars>>

\* create: engine.write_manifest(paths, manifest.replace(host_pid=host.pid))
CreateWritesManifest ==
    /\ cpc = "manifest"
    /\ WriteMf([NoManifest EXCEPT !.status = "running", !.host = CreateRecordsHostPid])
    /\ cpc' = "wait"
    /\ UNCHANGED <<hostJson, programJson, markDestroyed, markCreateFailed, sock, groupVars,
                   hostVars, cGaveUp, otherVars, gcVars, destroyVars, removedOnce,
                   gcRemovedLive, unrelatedKilled, unrelatedHostKilled, exitedOnOwn,
                   destroyKilled, hostFailedStart, groupSignalled, waitPassedReused, repaired, leftoverKilled>>

\* create: _wait_ready, the ping answers
CreateSeesReady ==
    /\ cpc = "wait" /\ sock /\ hAlive /\ hpc \in {"loop", "waitgroup"}
    /\ cpc' = "done"
    /\ UNCHANGED <<folderVars, groupVars, hostVars, cGaveUp, otherVars, gcVars, destroyVars, historyVars>>

\* create: _give_up, its first statement: write_marker(create_failed_marker) (HostChecksCreateFailed)
CreateGivesUp ==
    /\ cpc = "wait"
    /\ cGaveUp' = TRUE
    /\ markCreateFailed' = (markCreateFailed \/ (HostChecksCreateFailed /\ folder))
    /\ cpc' = "term"
    /\ UNCHANGED <<folder, mf, hostJson, programJson, markDestroyed, sock, groupVars, hostVars,
                   otherVars, gcVars, destroyVars, historyVars>>

\* create: _give_up, HostLaunch.stop: SIGTERM through the Popen handle (CreateStopsOnGiveUp);
\* nothing once the host was reaped. On Windows that SIGTERM ends the host at once.
CreateSendsSigterm ==
    /\ cpc = "term"
    /\ cpc' = "done"
    /\ IF CreateStopsOnGiveUp /\ hAlive /\ Win32
       THEN /\ hAlive' = FALSE /\ hpc' = "dead"
            /\ UNCHANGED <<termSent>>
       ELSE /\ termSent' = (termSent \/ (CreateStopsOnGiveUp /\ hAlive))
            /\ UNCHANGED <<hAlive, hpc>>
    /\ UNCHANGED <<folderVars, groupVars, hPidReused, hLate, hMf, hExit, hShutdown, hTimer, hWait,
                   hResized, destroyReq, destroyHandled, cGaveUp, otherVars, gcVars, destroyVars,
                   historyVars>>

-----------------------------------------------------------------------------
(* The host's start-up: agent_tty/host/main.py *)

HostGoes(failed) ==   \* main returns before it spawned anything
    /\ hpc' = "gone" /\ hAlive' = FALSE
    /\ hostFailedStart' = (hostFailedStart \/ (failed /\ ~cGaveUp))

\* wait_for_manifest: one read of session.json (HostWaitsForManifest: poll while create lives)
HostReadsManifest ==
    /\ hpc = "wait" /\ hAlive
    /\ \/ /\ termSent
          /\ HostGoes(FALSE) /\ UNCHANGED hMf
       \/ /\ ~termSent /\ mf.status # "none"
          /\ IF mf.host
             THEN hpc' = "identity" /\ hMf' = mf /\ UNCHANGED <<hAlive, hostFailedStart>>
             ELSE HostGoes(TRUE) /\ UNCHANGED hMf
       \/ /\ ~termSent /\ mf.status = "none" /\ (cpc = "done" \/ ~HostWaitsForManifest)
          /\ HostGoes(TRUE) /\ UNCHANGED hMf
    /\ UNCHANGED <<folderVars, groupVars, hPidReused, hLate, hExit, hShutdown, hTimer, hWait, hResized,
                   termSent, destroyReq, destroyHandled, createVars, otherVars, gcVars,
                   destroyVars, everTerminal, everNamed, exitRecorded, removedOnce,
                   gcRemovedLive, unrelatedKilled, unrelatedHostKilled, exitedOnOwn,
                   destroyKilled, groupSignalled, waitPassedReused, repaired, leftoverKilled>>

\* _start: write_record(paths.host, ...) (ProvesHostPid's record, written again by the host)
HostWritesIdentity ==
    /\ hpc = "identity" /\ hAlive
    /\ IF folder
       THEN hostJson' = TRUE /\ hpc' = "check1" /\ UNCHANGED hAlive
       ELSE hpc' = "gone" /\ hAlive' = FALSE /\ UNCHANGED hostJson
    /\ UNCHANGED <<folder, mf, programJson, markDestroyed, markCreateFailed, sock, groupVars,
                   hPidReused, hLate, hMf, hExit, hShutdown, hTimer, hWait, hResized, termSent,
                   destroyReq, destroyHandled, createVars, otherVars, gcVars, destroyVars, historyVars>>

\* _start: `if exists(paths.create_failed_marker) or signals.term: return 0`
HostChecksBeforeSpawn ==
    /\ hpc = "check1" /\ hAlive
    /\ IF (markCreateFailed /\ HostChecksCreateFailed) \/ termSent
       THEN hpc' = "gone" /\ hAlive' = FALSE
       ELSE hpc' = "spawn" /\ UNCHANGED hAlive
    /\ UNCHANGED <<folderVars, groupVars, hPidReused, hLate, hMf, hExit, hShutdown, hTimer, hWait,
                   hResized, termSent, destroyReq, destroyHandled, createVars, otherVars,
                   gcVars, destroyVars, historyVars>>

\* _start: platform.spawn, capture_program (TokenNamesProgram) and, in the same synchronous
\* block, write_record(paths.program, ...) (RecordsProgramSync). One step, because the program
\* is held at its start until program.json names it (StartGate: release() after the write), so
\* a host that dies inside the block leaves no program running.
HostSpawns ==
    /\ hpc = "spawn" /\ hAlive
    /\ leader' = "runs"
    /\ tokenOk' \in (IF TokenNamesProgram THEN {TRUE} ELSE BOOLEAN)
    /\ IF ~RecordsProgramSync
       THEN hpc' = "program" /\ UNCHANGED <<programJson>>
       ELSE IF folder
       THEN programJson' = TRUE /\ hpc' = "startup"
       ELSE hpc' = "abandon" /\ UNCHANGED <<programJson>>
    /\ UNCHANGED <<folder, mf, hostJson, markDestroyed, markCreateFailed, sock, leftover, foreign,
                   foreignUsed, reused, hAlive, hPidReused, hLate, hMf, hExit, hShutdown, hTimer, hWait,
                   hResized, termSent, destroyReq, destroyHandled, createVars, otherVars, gcVars,
                   destroyVars, historyVars>>

\* _start: write_record(paths.program, ...) as its own step (only without RecordsProgramSync)
HostWritesProgram ==
    /\ hpc = "program" /\ hAlive
    /\ IF folder THEN programJson' = TRUE /\ hpc' = "startup" ELSE hpc' = "abandon" /\ UNCHANGED programJson
    /\ UNCHANGED <<folder, mf, hostJson, markDestroyed, markCreateFailed, sock, groupVars, hAlive,
                   hPidReused, hLate, hMf, hExit, hShutdown, hTimer, hWait, hResized, termSent,
                   destroyReq, destroyHandled, createVars, otherVars, gcVars, destroyVars, historyVars>>

\* _start: writer.write(status=RUNNING, host_pid, child_pid): the start-up write. Without
\* HostSerializesWrites (the seed's mutant: each write an independent asynchronous write) the
\* write is in flight (hLate) while the host goes on, and lands at any later step of the host.
HostStartupWrite ==
    /\ hpc = "startup" /\ hAlive
    /\ LET new == [hMf EXCEPT !.status = "running", !.host = TRUE, !.child = TRUE] IN
       IF ~HostSerializesWrites
       THEN hMf' = new /\ hLate' = TRUE /\ hpc' = "check2" /\ UNCHANGED mfVars
       ELSE IF CanWrite
       THEN WriteMf(new) /\ hMf' = new /\ hpc' = "check2" /\ UNCHANGED hLate
       ELSE hpc' = "abandon" /\ UNCHANGED <<mfVars, hMf, hLate>>
    /\ UNCHANGED <<hostJson, programJson, markDestroyed, markCreateFailed, sock, groupVars, hAlive,
                   hPidReused, hExit, hShutdown, hTimer, hWait, hResized, termSent, destroyReq,
                   destroyHandled, createVars, otherVars, gcVars, destroyVars, removedOnce,
                   gcRemovedLive, unrelatedKilled, unrelatedHostKilled, exitedOnOwn,
                   destroyKilled, hostFailedStart, groupSignalled, waitPassedReused, repaired, leftoverKilled>>

\* The start-up write in flight lands (only without HostSerializesWrites); it dies with the host
HostLateWriteLands ==
    /\ hLate /\ hAlive
    /\ hLate' = FALSE
    /\ IF CanWrite
       THEN WriteMf([NoManifest EXCEPT !.status = "running", !.host = TRUE, !.child = TRUE])
       ELSE UNCHANGED mfVars
    /\ UNCHANGED <<hostJson, programJson, markDestroyed, markCreateFailed, sock, groupVars, hpc, hAlive,
                   hPidReused, hMf, hExit, hShutdown, hTimer, hWait, hResized, termSent, destroyReq,
                   destroyHandled, createVars, otherVars, gcVars, destroyVars, removedOnce,
                   gcRemovedLive, unrelatedKilled, unrelatedHostKilled, exitedOnOwn,
                   destroyKilled, hostFailedStart, groupSignalled, waitPassedReused, repaired, leftoverKilled>>

\* Host.abandon: the folder is gone under the host; it kills its group and ends
HostAbandons ==
    /\ hpc = "abandon" /\ hAlive
    /\ KillGroup("host")
    /\ hpc' = "gone" /\ hAlive' = FALSE
    /\ UNCHANGED <<folderVars, foreignUsed, reused, tokenOk, hPidReused, hLate, hMf, hExit, hShutdown,
                   hTimer, hWait, hResized, termSent, destroyReq, destroyHandled, createVars,
                   otherVars, gcVars, destroyVars, everTerminal, everNamed, exitRecorded,
                   removedOnce, gcRemovedLive, unrelatedHostKilled, exitedOnOwn,
                   destroyKilled, hostFailedStart, waitPassedReused, repaired>>

(* Shutdown.begin(reason) (host/shutdown.py), then the host goes to `next`. At most one write: destroying,
   only while the status is commandable (ShutdownChecksCommandable). *)
Shutdown(reason, next) ==
    IF hShutdown \in {"destroy", "sigterm", "create-failed"}
    THEN /\ hpc' = next
         /\ UNCHANGED <<mfVars, hMf, hShutdown, hTimer, hWait, KillGroupChanges>>
    ELSE
      LET writes == Commandable(hMf.status) \/ ~ShutdownChecksCommandable
          new == [hMf EXCEPT !.status = "destroying"]
      IN
      /\ hShutdown' = reason
      /\ IF writes /\ ~CanWrite
         THEN hpc' = "done" /\ UNCHANGED <<mfVars, hMf, hTimer, hWait, KillGroupChanges>>
         ELSE /\ IF writes THEN WriteMf(new) /\ hMf' = new ELSE UNCHANGED <<mfVars, hMf>>
              /\ IF hExit
                 THEN KillGroup("host") /\ hpc' = "waitgroup" /\ hWait' = "destroyed" /\ UNCHANGED hTimer
                 ELSE \* SIGHUP to the group now, SIGKILL from the kill timer
                      /\ hTimer' = TRUE /\ groupSignalled' = TRUE /\ hpc' = next
                      /\ UNCHANGED <<hWait, leader, leftover, foreign, unrelatedKilled, leftoverKilled>>

ShutdownUnchanged ==
    <<hostJson, programJson, markDestroyed, markCreateFailed, sock, foreignUsed, reused, tokenOk,
      hAlive, hPidReused, hLate, hExit, hResized, createVars, otherVars, gcVars, destroyVars,
      removedOnce, gcRemovedLive, unrelatedHostKilled, exitedOnOwn, destroyKilled,
      hostFailedStart, waitPassedReused, repaired>>

\* _start: `if exists(paths.create_failed_marker): host.shutdown.begin(Reason.CREATE_FAILED)`
HostChecksAfterStartup ==
    /\ hpc = "check2" /\ hAlive
    /\ IF markCreateFailed /\ HostChecksCreateFailed
       THEN Shutdown("create-failed", "listen")
       ELSE hpc' = "listen" /\ UNCHANGED <<mfVars, hMf, hShutdown, hTimer, hWait, KillGroupChanges>>
    /\ UNCHANGED <<termSent, destroyReq, destroyHandled>>
    /\ UNCHANGED ShutdownUnchanged

\* Host.listen: bind the socket
HostListens ==
    /\ hpc = "listen" /\ hAlive
    /\ sock' = TRUE /\ hpc' = "loop"
    /\ UNCHANGED <<folder, mf, hostJson, programJson, markDestroyed, markCreateFailed, groupVars,
                   hAlive, hPidReused, hLate, hMf, hExit, hShutdown, hTimer, hWait, hResized, termSent,
                   destroyReq, destroyHandled, createVars, otherVars, gcVars, destroyVars, historyVars>>

-----------------------------------------------------------------------------
(* The host's event loop: agent_tty/host/loop.py, and its shutdown machine: host/shutdown.py *)

Serving == hAlive /\ hpc \in {"loop", "waitgroup"}

\* Host._check_signals: SIGTERM starts the shutdown (CreateStopsOnGiveUp's receiving end)
HostHandlesSigterm ==
    /\ Serving /\ termSent /\ hShutdown \notin {"destroy", "sigterm", "create-failed"}
    /\ Shutdown("sigterm", hpc)
    /\ UNCHANGED <<termSent, destroyReq, destroyHandled>>
    /\ UNCHANGED ShutdownUnchanged

\* Host._op_destroy: shutdown.begin(Reason.DESTROY); the reply waits for _close
HostHandlesDestroy ==
    /\ Serving /\ destroyReq /\ ~destroyHandled
    /\ destroyHandled' = TRUE
    /\ Shutdown("destroy", hpc)
    /\ UNCHANGED <<termSent, destroyReq>>
    /\ UNCHANGED ShutdownUnchanged

\* Host._op_resize: a write of the same record while commandable
HostResizes ==
    /\ Resize /\ hpc = "loop" /\ hAlive /\ ~hResized /\ Commandable(hMf.status)
    /\ hResized' = TRUE
    /\ IF CanWrite THEN WriteMf(hMf) /\ UNCHANGED hpc ELSE hpc' = "done" /\ UNCHANGED mfVars
    /\ UNCHANGED <<hostJson, programJson, markDestroyed, markCreateFailed, sock, groupVars, hAlive,
                   hPidReused, hLate, hMf, hExit, hShutdown, hTimer, hWait, termSent, destroyReq,
                   destroyHandled, createVars, otherVars, gcVars, destroyVars, removedOnce,
                   gcRemovedLive, unrelatedKilled, unrelatedHostKilled, exitedOnOwn,
                   destroyKilled, hostFailedStart, groupSignalled, waitPassedReused, repaired, leftoverKilled>>

\* The kill timer of Shutdown.begin: SIGKILL to the proven group
HostKillTimer ==
    /\ hpc = "loop" /\ hAlive /\ hTimer /\ ~hExit
    /\ hTimer' = FALSE
    /\ KillGroup("host")
    /\ UNCHANGED <<folderVars, foreignUsed, reused, tokenOk, hpc, hAlive, hPidReused, hLate, hMf, hExit,
                   hShutdown, hWait, hResized, termSent, destroyReq, destroyHandled, createVars,
                   otherVars, gcVars, destroyVars, everTerminal, everNamed, exitRecorded,
                   removedOnce, gcRemovedLive, unrelatedHostKilled, exitedOnOwn,
                   destroyKilled, hostFailedStart, waitPassedReused, repaired>>

\* Host._check_exit and Shutdown.on_exit: after a shutdown, SIGKILL to the group and wait
\* (KillsProgramGroup); else `exiting` while the group outlives its leader, or straight to exited
HostSeesExit ==
    /\ hpc = "loop" /\ hAlive /\ leader = "ended" /\ ~hExit
    /\ hExit' = TRUE /\ hTimer' = FALSE
    /\ IF hShutdown \in {"destroy", "sigterm", "create-failed"}
       THEN /\ KillGroup("host") /\ hpc' = "waitgroup" /\ hWait' = "destroyed"
            /\ UNCHANGED <<mfVars, hMf>>
       ELSE IF Alive("host")
       THEN LET new == [hMf EXCEPT !.status = "exiting", !.exit = TRUE] IN
            /\ IF CanWrite
               THEN WriteMf(new) /\ hMf' = new /\ hpc' = "waitgroup" /\ hWait' = "exited"
               ELSE hpc' = "done" /\ UNCHANGED <<mfVars, hMf, hWait>>
            /\ UNCHANGED KillGroupChanges
       ELSE hpc' = "final" /\ hWait' = "exited" /\ UNCHANGED <<mfVars, hMf, KillGroupChanges>>
    /\ UNCHANGED <<hostJson, programJson, markDestroyed, markCreateFailed, sock, foreignUsed, reused,
                   tokenOk, hAlive, hPidReused, hLate, hShutdown, hResized, termSent, destroyReq,
                   destroyHandled, createVars, otherVars, gcVars, destroyVars, removedOnce,
                   gcRemovedLive, unrelatedHostKilled, exitedOnOwn, destroyKilled,
                   hostFailedStart, waitPassedReused, repaired>>

\* Shutdown.wait_group's poll: gone -> the record; still alive at the limit -> give up
\* (HostWaitsForGroup: after a shutdown, a group that outlives the wait gets no destroyed)
HostPollsGroup ==
    /\ hpc = "waitgroup" /\ hAlive
    /\ IF ~Alive("host") \/ (~HostWaitsForGroup /\ hWait = "destroyed")
       THEN hpc' = IF hWait = "destroyed" THEN "marker" ELSE "final"
       ELSE hpc' = IF hWait = "destroyed" THEN "done" ELSE "final"
    /\ UNCHANGED <<folderVars, groupVars, hAlive, hPidReused, hLate, hMf, hExit, hShutdown, hTimer, hWait,
                   hResized, termSent, destroyReq, destroyHandled, createVars, otherVars, gcVars,
                   destroyVars, historyVars>>

\* Shutdown.finish_destroyed: write_marker(destroyed_marker) (DestroyRecordsDestroyed)
HostWritesMarker ==
    /\ hpc = "marker" /\ hAlive
    /\ IF CanWrite
       THEN markDestroyed' = TRUE /\ folder' = TRUE /\ hpc' = "final"
       ELSE hpc' = "done" /\ UNCHANGED <<markDestroyed, folder>>
    /\ UNCHANGED <<mf, hostJson, programJson, markCreateFailed, sock, groupVars, hAlive, hPidReused, hLate,
                   hMf, hExit, hShutdown, hTimer, hWait, hResized, termSent, destroyReq,
                   destroyHandled, createVars, otherVars, gcVars, destroyVars, historyVars>>

\* Shutdown.finish_exited / finish_destroyed: the terminal write, then `ended`
\* (HostStopsAfterTerminalWrite: the loop ends; ManifestWriter refuses later writes)
HostWritesTerminal ==
    /\ hpc = "final" /\ hAlive
    /\ LET new == IF hWait = "destroyed"
                  THEN [hMf EXCEPT !.status = "destroyed", !.exit = (hExit /\ DestroyKeepsExitCode)]
                  ELSE [hMf EXCEPT !.status = "exited", !.exit = TRUE]
       IN IF CanWrite
          THEN /\ WriteMf(new) /\ hMf' = new
               /\ hpc' = IF HostStopsAfterTerminalWrite THEN "done" ELSE "loop"
          ELSE hpc' = "done" /\ UNCHANGED <<mfVars, hMf>>
    /\ UNCHANGED <<hostJson, programJson, markDestroyed, markCreateFailed, sock, groupVars, hAlive,
                   hPidReused, hLate, hExit, hShutdown, hTimer, hWait, hResized, termSent, destroyReq,
                   destroyHandled, createVars, otherVars, gcVars, destroyVars, removedOnce,
                   gcRemovedLive, unrelatedKilled, unrelatedHostKilled, exitedOnOwn,
                   destroyKilled, hostFailedStart, groupSignalled, waitPassedReused, repaired, leftoverKilled>>

\* Host._close: reply to destroy, unlink the socket; main returns and the process ends
HostCloses ==
    /\ hpc = "done" /\ hAlive
    /\ hpc' = "gone" /\ hAlive' = FALSE /\ sock' = FALSE
    /\ UNCHANGED <<folder, mf, hostJson, programJson, markDestroyed, markCreateFailed, groupVars,
                   hPidReused, hLate, hMf, hExit, hShutdown, hTimer, hWait, hResized, termSent,
                   destroyReq, destroyHandled, createVars, otherVars, gcVars, destroyVars, historyVars>>

-----------------------------------------------------------------------------
(* reconcile: agent_tty/lifecycle/reconcile.py, run by the other command *)

OtherNextRound ==
    IF oRound + 1 < Reconciles
    THEN opc' = "read" /\ oRound' = oRound + 1
    ELSE opc' = "done" /\ UNCHANGED oRound

\* repair_marked: a terminal copy beside the marker is rewritten destroyed (ReconcileRepairsMarked)
OtherOnTerminal(copy) ==
    IF ReconcileRepairsMarked /\ markDestroyed /\ copy.status # "destroyed"
    THEN opc' = "repair" /\ UNCHANGED oRound
    ELSE OtherNextRound

\* reconcile: the manifest its caller read (list, inspect, gc and destroy read it first);
\* `if is_terminal(manifest.status): return` (ReconcileSkipsTerminal)
OtherReads ==
    /\ opc = "read"
    /\ oCopy' = mf
    /\ IF mf.status = "none" THEN OtherNextRound
       ELSE IF Terminal(mf.status) /\ ReconcileSkipsTerminal THEN OtherOnTerminal(mf)
       ELSE opc' = "judge" /\ UNCHANGED oRound
    /\ UNCHANGED <<folderVars, groupVars, hostVars, createVars, gcVars, destroyVars, historyVars>>

\* reconcile: Engine.judge_host for that copy (ReconcileSkipsLiveHost: go on only on proof of
\* the host's death)
OtherJudgesHost ==
    /\ opc = "judge"
    /\ IF HostVerdict(oCopy) = "dead" \/ (~ReconcileSkipsLiveHost /\ HostVerdict(oCopy) = "unknown")
       THEN opc' = "reread" /\ UNCHANGED oRound
       ELSE OtherNextRound
    /\ UNCHANGED <<oCopy, folderVars, groupVars, hostVars, createVars, gcVars, destroyVars, historyVars>>

\* reconcile: `again = _reread(...)` (ReconcileRereads)
OtherRereads ==
    /\ opc = "reread"
    /\ LET copy == IF ReconcileRereads THEN mf ELSE oCopy IN
       /\ oCopy' = copy
       /\ IF copy.status = "none" THEN OtherNextRound
          ELSE IF Terminal(copy.status) THEN OtherOnTerminal(copy)
          ELSE opc' = "kill" /\ UNCHANGED oRound
    /\ UNCHANGED <<folderVars, groupVars, hostVars, createVars, gcVars, destroyVars, historyVars>>

\* reconcile: engine.group (program.json) and the kill; Engine.unprovable writes nothing
OtherKills ==
    /\ opc = "kill"
    /\ IF (~programJson /\ oCopy.child) \/ GroupReadFails("cli")   \* unprovable, or the read raises
       THEN OtherNextRound /\ UNCHANGED KillGroupChanges
       ELSE KillGroup("cli") /\ opc' = "wait" /\ UNCHANGED oRound
    /\ UNCHANGED <<oCopy, folderVars, foreignUsed, reused, tokenOk, hostVars, createVars, gcVars,
                   destroyVars, everTerminal, everNamed, exitRecorded, removedOnce, gcRemovedLive,
                   unrelatedHostKilled, exitedOnOwn, destroyKilled, hostFailedStart,
                   waitPassedReused, repaired>>

\* reconcile: Engine.wait_group_gone's poll (ReconcileWaitsForGroup: no write while it runs)
OtherWaits ==
    /\ opc = "wait"
    /\ IF ~Alive("cli") \/ ~ReconcileWaitsForGroup
       THEN opc' = "lastread" /\ UNCHANGED oRound
       ELSE OtherNextRound
    /\ UNCHANGED <<oCopy, folderVars, groupVars, hostVars, createVars, gcVars, destroyVars, historyVars>>

\* reconcile: `last = _reread(...)` (ReconcileRereads)
OtherLastRead ==
    /\ opc = "lastread"
    /\ LET copy == IF ReconcileRereads THEN mf ELSE oCopy IN
       /\ oCopy' = copy
       /\ IF copy.status = "none" THEN OtherNextRound
          ELSE IF Terminal(copy.status) THEN OtherOnTerminal(copy)
          ELSE opc' = "failed" /\ UNCHANGED oRound
    /\ UNCHANGED <<folderVars, groupVars, hostVars, createVars, gcVars, destroyVars, historyVars>>

\* reconcile: the failed write from the last copy, then unlink_socket. A copy that records the
\* program's exit (exiting) ends `exited` (ReconcileRecordsExit); childPid stays (R13).
OtherWritesFailed ==
    /\ opc = "failed"
    /\ LET recorded == oCopy.exit /\ ReconcileRecordsExit
           new == [oCopy EXCEPT !.status = IF recorded THEN "exited" ELSE "failed",
                                !.death = ~recorded,
                                !.child = (oCopy.child /\ ReconcileWaitsForGroup)]
       IN IF CanWrite
          THEN WriteMf(new) /\ sock' = FALSE /\ opc' = "marker" /\ UNCHANGED oRound
          ELSE OtherNextRound /\ UNCHANGED <<mfVars, sock>>
    /\ UNCHANGED <<oCopy, hostJson, programJson, markDestroyed, markCreateFailed, groupVars,
                   hostVars, createVars, gcVars, destroyVars, removedOnce, gcRemovedLive,
                   unrelatedKilled, unrelatedHostKilled, exitedOnOwn, destroyKilled,
                   hostFailedStart, groupSignalled, waitPassedReused, repaired, leftoverKilled>>

\* reconcile: `if exists(paths.destroyed_marker)` after its write (ReconcileRepairsDestroyed)
OtherChecksMarker ==
    /\ opc = "marker"
    /\ IF ReconcileRepairsDestroyed /\ markDestroyed
       THEN opc' = "repair" /\ UNCHANGED oRound
       ELSE OtherNextRound
    /\ UNCHANGED <<oCopy, folderVars, groupVars, hostVars, createVars, gcVars, destroyVars, historyVars>>

\* Engine.record_destroyed from the reconcile's copy (marker already there), then unlink_socket
OtherRepairs ==
    /\ opc = "repair"
    /\ IF CanWrite
       THEN WriteMf(DestroyedFrom(oCopy)) /\ sock' = FALSE /\ repaired' = TRUE
       ELSE UNCHANGED <<mfVars, sock, repaired>>
    /\ OtherNextRound
    /\ UNCHANGED <<oCopy, hostJson, programJson, markDestroyed, markCreateFailed, groupVars, hostVars,
                   createVars, gcVars, destroyVars, removedOnce, gcRemovedLive, unrelatedKilled,
                   unrelatedHostKilled, exitedOnOwn, destroyKilled, hostFailedStart,
                   groupSignalled, waitPassedReused, leftoverKilled>>

-----------------------------------------------------------------------------
(* gc: agent_tty/lifecycle/gc.py _collect (its reconcile is the other command's) *)

GcSkips == gpc' = "done" /\ UNCHANGED gDestroyed

\* _collect: read_manifest and the policy checks (GcSkipsNonCollectable)
GcReads ==
    /\ gpc = "read"
    /\ IF mf.status = "none" \/ (GcSkipsNonCollectable /\ ~Collectable(mf.status))
       THEN GcSkips
       ELSE gDestroyed' = (mf.status = "destroyed") /\ gpc' = "judge"
    /\ UNCHANGED <<folderVars, groupVars, hostVars, createVars, otherVars, destroyVars, historyVars>>

\* _collect: `if manifest.status is not DESTROYED and _group_runs(...)` (GcKeepsLiveGroup)
GcJudgesGroup ==
    /\ gpc = "judge"
    /\ IF GcKeepsLiveGroup /\ ~gDestroyed /\ (GroupReadFails("cli") \/ GcSeesGroupRuns)
       THEN GcSkips   \* a group read that raises skips the session too
       ELSE gpc' = "final" /\ UNCHANGED gDestroyed
    /\ UNCHANGED <<folderVars, groupVars, hostVars, createVars, otherVars, destroyVars, historyVars>>

\* _collect: the final read right before the rm (GcFinalCheck)
GcFinalRead ==
    /\ gpc = "final"
    /\ IF mf.status = "none" \/ (GcFinalCheck /\ ~Collectable(mf.status))
       THEN GcSkips
       ELSE gpc' = "rm" /\ UNCHANGED gDestroyed
    /\ UNCHANGED <<folderVars, groupVars, hostVars, createVars, otherVars, destroyVars, historyVars>>

\* _remove: shutil.rmtree of the folder (retried on ENOTEMPTY), then unlink_socket
GcRemoves ==
    /\ gpc = "rm"
    /\ folder' = FALSE /\ mf' = NoManifest /\ hostJson' = FALSE /\ programJson' = FALSE
    /\ markDestroyed' = FALSE /\ markCreateFailed' = FALSE /\ sock' = FALSE
    /\ removedOnce' = TRUE
    /\ gcRemovedLive' = (gcRemovedLive \/ (Members /\ ~OtherSpace))
    /\ gpc' = "done"
    /\ UNCHANGED <<gDestroyed, groupVars, hostVars, createVars, otherVars, destroyVars, everTerminal,
                   everNamed, exitRecorded, unrelatedKilled, unrelatedHostKilled, exitedOnOwn,
                   destroyKilled, hostFailedStart, groupSignalled, waitPassedReused, repaired, leftoverKilled>>

-----------------------------------------------------------------------------
(* destroy: agent_tty/ops/destroy.py and agent_tty/lifecycle/destroy.py *)

DestroyEnds(result) == dpc' = "done" /\ dResult' = result

\* The command starts; a destroy the program runs starts while the program runs
DestroyStarts ==
    /\ dpc = "idle"
    /\ dInside => (leader = "runs" /\ hAlive)
    /\ dpc' = "check"
    /\ UNCHANGED <<folderVars, groupVars, hostVars, createVars, otherVars, gcVars, dKind, dInside,
                   dRerun, dCopy, dResult, dSaw, historyVars>>

\* command: _runs_inside (InsideCheckReadsEnv: AGENT_TTY_SESSION_ID first, then the session id
\* against childPid), then _rerun_in_new_session (ReRunsInNewSession)
DestroyChecksInside ==
    /\ dpc = "check"
    /\ LET seen == dInside /\ (InsideCheckReadsEnv \/ mf.child) IN
       dRerun' = (seen /\ ReRunsInNewSession)
    /\ dpc' = "read"
    /\ UNCHANGED <<folderVars, groupVars, hostVars, createVars, otherVars, gcVars, dKind, dInside,
                   dCopy, dResult, dSaw, historyVars>>

\* destroy: the first read (after its reconcile, which the other command stands for)
DestroyReads ==
    /\ dpc = "read"
    /\ dCopy' = mf
    /\ IF mf.status = "none" THEN DestroyEnds("error") /\ UNCHANGED dSaw
       ELSE IF mf.status = "destroyed" THEN DestroyEnds("ok") /\ dSaw' = TRUE
       ELSE IF Terminal(mf.status) THEN dpc' = "kill" /\ UNCHANGED <<dResult, dSaw>>
       ELSE IF dKind = "force" THEN dpc' = "killhost" /\ UNCHANGED <<dResult, dSaw>>
       ELSE dpc' = "rpc" /\ UNCHANGED <<dResult, dSaw>>
    /\ UNCHANGED <<folderVars, groupVars, hostVars, createVars, otherVars, gcVars, dKind, dInside,
                   dRerun, historyVars>>

\* _plain: rpc.call(socket, destroy)
DestroySendsRpc ==
    /\ dpc = "rpc"
    /\ IF sock /\ Serving
       THEN destroyReq' = TRUE /\ dpc' = "await"
       ELSE dpc' = "unreach" /\ UNCHANGED destroyReq
    /\ UNCHANGED <<folderVars, groupVars, hpc, hAlive, hPidReused, hLate, hMf, hExit, hShutdown, hTimer,
                   hWait, hResized, termSent, destroyHandled, createVars, otherVars, gcVars,
                   dKind, dInside, dRerun, dCopy, dResult, dSaw, historyVars>>

\* _plain: the reply comes from Host._close; a host that died first is unreachable
DestroyGetsReply ==
    /\ dpc = "await"
    /\ hpc \in {"gone", "dead"}
    /\ dpc' = IF hpc = "gone" /\ destroyHandled THEN "final" ELSE "unreach"
    /\ UNCHANGED <<folderVars, groupVars, hostVars, createVars, otherVars, gcVars, dKind, dInside,
                   dRerun, dCopy, dResult, dSaw, historyVars>>

\* _plain: `final = engine.read_manifest(paths)` after the reply, or the read after the
\* reconcile of an unreachable host: destroyed -> ok; exited/failed -> stop the leftovers
DestroyRereads ==
    /\ dpc \in {"final", "unreach"}
    /\ dCopy' = mf
    /\ IF mf.status = "destroyed" THEN DestroyEnds("ok") /\ dSaw' = TRUE
       ELSE IF Terminal(mf.status) THEN dpc' = "kill" /\ UNCHANGED <<dResult, dSaw>>
       ELSE DestroyEnds("error") /\ UNCHANGED dSaw
    /\ UNCHANGED <<folderVars, groupVars, hostVars, createVars, otherVars, gcVars, dKind, dInside,
                   dRerun, historyVars>>

\* _force: kill_host only when host.json names the manifest's hostPid and proves it (ProvesHostPid)
DestroyKillsHost ==
    /\ dpc = "killhost"
    /\ IF ~(hostJson /\ dCopy.host)
       THEN UNCHANGED <<hpc, hAlive, unrelatedHostKilled>>
       ELSE IF ProvesHostPid
       THEN IF HostVerdict(dCopy) = "alive" THEN hAlive' = FALSE /\ hpc' = "dead" /\ UNCHANGED unrelatedHostKilled
            ELSE UNCHANGED <<hpc, hAlive, unrelatedHostKilled>>
       ELSE IF hAlive THEN hAlive' = FALSE /\ hpc' = "dead" /\ UNCHANGED unrelatedHostKilled
       ELSE unrelatedHostKilled' = (unrelatedHostKilled \/ hPidReused) /\ UNCHANGED <<hpc, hAlive>>
    /\ dpc' = "waithost"
    /\ UNCHANGED <<folderVars, groupVars, hPidReused, hLate, hMf, hExit, hShutdown, hTimer, hWait,
                   hResized, termSent, destroyReq, destroyHandled, createVars, otherVars, gcVars,
                   dKind, dInside, dRerun, dCopy, dResult, dSaw, everTerminal, everNamed,
                   exitRecorded, removedOnce, gcRemovedLive, unrelatedKilled, exitedOnOwn,
                   destroyKilled, hostFailedStart, groupSignalled, waitPassedReused, repaired, leftoverKilled>>

\* _force: poll judge_host until it reads dead, else HOST_TIMEOUT
DestroyWaitsHost ==
    /\ dpc = "waithost"
    /\ IF HostVerdict(dCopy) = "dead" THEN dpc' = "fread" /\ UNCHANGED dResult ELSE DestroyEnds("error")
    /\ UNCHANGED <<folderVars, groupVars, hostVars, createVars, otherVars, gcVars, dKind, dInside,
                   dRerun, dCopy, dSaw, historyVars>>

\* _force: `again = engine.read_manifest(paths)` once the host is dead
DestroyForceReads ==
    /\ dpc = "fread"
    /\ dCopy' = mf
    /\ IF mf.status = "none" THEN DestroyEnds("error") ELSE dpc' = "kill" /\ UNCHANGED dResult
    /\ UNCHANGED <<folderVars, groupVars, hostVars, createVars, otherVars, gcVars, dKind, dInside,
                   dRerun, dSaw, historyVars>>

\* stop_leftovers_then_record_destroyed and _force: kill the group program.json proves
\* (DestroyStopsLeftovers on the terminal path). A group read that raises (CheckFails) fails a
\* plain destroy; destroy --force, whose host is proven dead here, reads twice in
\* _unchecked_group and records destroyed without the group (ForceSkipsUnreadableGroup): its kind
\* becomes "blind", the ghost that R11, R16 and R20 leave out.
DestroyKillsGroup ==
    /\ dpc = "kill"
    /\ IF ~DestroyStopsLeftovers /\ Terminal(dCopy.status)
       THEN dpc' = "marker" /\ UNCHANGED <<KillGroupChanges, dKind, dResult>>
       ELSE IF GroupReadFails("cli")
       THEN /\ IF dKind = "force" /\ ForceSkipsUnreadableGroup
               THEN dpc' = "marker" /\ dKind' = "blind" /\ UNCHANGED dResult
               ELSE DestroyEnds("error") /\ UNCHANGED dKind
            /\ UNCHANGED KillGroupChanges
       ELSE KillGroup("cli") /\ dpc' = "wait" /\ UNCHANGED <<dKind, dResult>>
    /\ UNCHANGED <<folder, mf, hostJson, programJson, markDestroyed, markCreateFailed, sock,
                   foreignUsed, reused, tokenOk, hostVars, createVars, otherVars, gcVars,
                   dInside, dRerun, dCopy, dSaw, everTerminal, everNamed, exitRecorded,
                   removedOnce, gcRemovedLive, unrelatedHostKilled, exitedOnOwn, destroyKilled,
                   hostFailedStart, waitPassedReused, repaired>>

\* Engine.wait_group_gone's poll: gone -> record; alive at the limit -> HOST_TIMEOUT
DestroyWaitsGroup ==
    /\ dpc = "wait"
    /\ IF ~Alive("cli")
       THEN /\ dpc' = IF dKind = "force" /\ ~Terminal(dCopy.status) THEN "freread" ELSE "marker"
            /\ waitPassedReused' = (waitPassedReused \/ (reused /\ HasRecord("cli")))
            /\ UNCHANGED dResult
       ELSE DestroyEnds("error") /\ UNCHANGED waitPassedReused
    /\ UNCHANGED <<folderVars, groupVars, hostVars, createVars, otherVars, gcVars, dKind, dInside,
                   dRerun, dCopy, dSaw, everTerminal, everNamed, exitRecorded, removedOnce,
                   gcRemovedLive, unrelatedKilled, unrelatedHostKilled, exitedOnOwn,
                   destroyKilled, hostFailedStart, groupSignalled, repaired, leftoverKilled>>

\* _force: the read after the group wait; destroyed already -> ok
\* (DestroyRecordsDestroyed: success only from a read or a write of destroyed)
DestroyForceRereads ==
    /\ dpc = "freread"
    /\ dCopy' = mf
    /\ IF mf.status = "destroyed" THEN DestroyEnds("ok") /\ dSaw' = TRUE
       ELSE IF mf.status = "none" THEN DestroyEnds("error") /\ UNCHANGED dSaw
       ELSE IF ~DestroyRecordsDestroyed THEN DestroyEnds("ok") /\ UNCHANGED dSaw
       ELSE dpc' = "marker" /\ UNCHANGED <<dResult, dSaw>>
    /\ UNCHANGED <<folderVars, groupVars, hostVars, createVars, otherVars, gcVars, dKind, dInside,
                   dRerun, historyVars>>

\* Engine.record_destroyed: write_marker(destroyed_marker)
DestroyWritesMarker ==
    /\ dpc = "marker"
    /\ IF CanWrite
       THEN markDestroyed' = TRUE /\ folder' = TRUE /\ dpc' = "write" /\ UNCHANGED dResult
       ELSE DestroyEnds("error") /\ UNCHANGED <<markDestroyed, folder>>
    /\ UNCHANGED <<mf, hostJson, programJson, markCreateFailed, sock, groupVars, hostVars,
                   createVars, otherVars, gcVars, dKind, dInside, dRerun, dCopy, dSaw, historyVars>>

\* Engine.record_destroyed: destroyed from the copy, then unlink_socket
DestroyWritesDestroyed ==
    /\ dpc = "write"
    /\ IF CanWrite
       THEN WriteMf(DestroyedFrom(dCopy)) /\ sock' = FALSE /\ dSaw' = TRUE /\ DestroyEnds("ok")
       ELSE DestroyEnds("error") /\ UNCHANGED <<mfVars, sock, dSaw>>
    /\ UNCHANGED <<hostJson, programJson, markDestroyed, markCreateFailed, groupVars, hostVars,
                   createVars, otherVars, gcVars, dKind, dInside, dRerun, dCopy, removedOnce,
                   gcRemovedLive, unrelatedKilled, unrelatedHostKilled, exitedOnOwn,
                   destroyKilled, hostFailedStart, groupSignalled, waitPassedReused, repaired, leftoverKilled>>

\* A destroy inside the program's session that did not re-run dies with the program's
\* leader, its group's signals or its PTY (the host's end)
DestroyDiesInside ==
    /\ dInside /\ ~dRerun /\ dpc \notin {"idle", "check", "done", "died"}
    /\ leader = "ended" \/ ~hAlive \/ groupSignalled
    /\ dpc' = "died" /\ destroyKilled' = TRUE
    /\ UNCHANGED <<folderVars, groupVars, hostVars, createVars, otherVars, gcVars, dKind, dInside,
                   dRerun, dCopy, dResult, dSaw, everTerminal, everNamed, exitRecorded,
                   removedOnce, gcRemovedLive, unrelatedKilled, unrelatedHostKilled,
                   exitedOnOwn, hostFailedStart, groupSignalled, waitPassedReused, repaired, leftoverKilled>>

-----------------------------------------------------------------------------
(* The environment *)

\* The program's leader exits (on its own, or on the hang-up of a shutdown or a dead host)
ProgramExits ==
    /\ leader = "runs"
    /\ leader' = "ended"
    /\ exitedOnOwn' = (exitedOnOwn \/ (hShutdown = "none" /\ ~groupSignalled))
    /\ UNCHANGED <<folderVars, leftover, foreign, foreignUsed, reused, tokenOk, hostVars, createVars,
                   otherVars, gcVars, destroyVars, everTerminal, everNamed, exitRecorded,
                   removedOnce, gcRemovedLive, unrelatedKilled, unrelatedHostKilled,
                   destroyKilled, hostFailedStart, groupSignalled, waitPassedReused, repaired, leftoverKilled>>

\* The program starts a process that ignores SIGHUP (trap '' HUP; sleep &), or a fork chain
ProgramLeavesProcess ==
    /\ leader = "runs" /\ ~leftover
    /\ leftover' = TRUE
    /\ UNCHANGED <<folderVars, leader, foreign, foreignUsed, reused, tokenOk, hostVars, createVars,
                   otherVars, gcVars, destroyVars, historyVars>>

\* A process of another user joins the group (sudo cmd &): our SIGKILL cannot reach it
ForeignJoins ==
    /\ Foreign /\ leader = "runs" /\ ~foreignUsed
    /\ foreign' = TRUE /\ foreignUsed' = TRUE
    /\ UNCHANGED <<folderVars, leader, leftover, reused, tokenOk, hostVars, createVars, otherVars,
                   gcVars, destroyVars, historyVars>>

ForeignEnds ==
    /\ foreign
    /\ foreign' = FALSE
    /\ UNCHANGED <<folderVars, leader, leftover, foreignUsed, reused, tokenOk, hostVars, createVars,
                   otherVars, gcVars, destroyVars, historyVars>>

\* Once the group ended and its leader was reaped, an unrelated group may take its id
GroupIdReused ==
    /\ leader = "ended" /\ ~leftover /\ ~foreign /\ ~reused /\ (hExit \/ ~hAlive)
    /\ reused' = TRUE
    /\ UNCHANGED <<folderVars, leader, leftover, foreign, foreignUsed, tokenOk, hostVars, createVars,
                   otherVars, gcVars, destroyVars, historyVars>>

\* The host dies at any step (SIGKILL, OOM)
HostCrashes ==
    /\ hAlive
    /\ hAlive' = FALSE /\ hpc' = "dead"
    /\ UNCHANGED <<folderVars, groupVars, hPidReused, hLate, hMf, hExit, hShutdown, hTimer, hWait, hResized,
                   termSent, destroyReq, destroyHandled, createVars, otherVars, gcVars, destroyVars,
                   historyVars>>

\* An unrelated process takes the pid of the ended host
HostPidReused ==
    /\ dKind = "force"   \* only destroy --force kills a host: elsewhere a reused pid changes nothing
    /\ ~hAlive /\ hpc \in {"gone", "dead"} /\ ~hPidReused
    /\ hPidReused' = TRUE
    /\ UNCHANGED <<folderVars, groupVars, hpc, hAlive, hMf, hExit, hShutdown, hTimer, hWait, hResized,
                   termSent, destroyReq, destroyHandled, hLate, createVars, otherVars, gcVars, destroyVars,
                   historyVars>>

-----------------------------------------------------------------------------
Next ==
    \/ CreateLaunchesHost \/ CreateWritesHostJson \/ CreateWritesManifest \/ CreateSeesReady
    \/ CreateGivesUp \/ CreateSendsSigterm
    \/ HostReadsManifest \/ HostWritesIdentity \/ HostChecksBeforeSpawn \/ HostSpawns
    \/ HostWritesProgram \/ HostStartupWrite \/ HostLateWriteLands \/ HostAbandons \/ HostChecksAfterStartup
    \/ HostListens \/ HostHandlesSigterm \/ HostHandlesDestroy \/ HostResizes \/ HostKillTimer
    \/ HostSeesExit \/ HostPollsGroup \/ HostWritesMarker \/ HostWritesTerminal \/ HostCloses
    \/ OtherReads \/ OtherJudgesHost \/ OtherRereads \/ OtherKills \/ OtherWaits \/ OtherLastRead
    \/ OtherWritesFailed \/ OtherChecksMarker \/ OtherRepairs
    \/ GcReads \/ GcJudgesGroup \/ GcFinalRead \/ GcRemoves
    \/ DestroyStarts \/ DestroyChecksInside \/ DestroyReads \/ DestroySendsRpc
    \/ DestroyGetsReply \/ DestroyRereads \/ DestroyKillsHost \/ DestroyWaitsHost
    \/ DestroyForceReads \/ DestroyKillsGroup \/ DestroyWaitsGroup \/ DestroyForceRereads
    \/ DestroyWritesMarker \/ DestroyWritesDestroyed \/ DestroyDiesInside
    \/ ProgramExits \/ ProgramLeavesProcess \/ ForeignJoins \/ ForeignEnds \/ GroupIdReused
    \/ HostCrashes \/ HostPidReused

-----------------------------------------------------------------------------
(* The rules *)

TypeOK ==
    /\ folder \in BOOLEAN /\ mf \in Manifest /\ hMf \in Manifest
    /\ oCopy \in Manifest /\ gDestroyed \in BOOLEAN /\ dCopy \in Manifest
    /\ leader \in {"unborn", "runs", "ended"}
    /\ hpc \in {"none", "wait", "identity", "check1", "spawn", "program", "startup", "abandon",
                "check2", "listen", "loop", "waitgroup", "marker", "final", "done", "gone", "dead"}
    /\ hShutdown \in {"none", "destroy", "sigterm", "create-failed"}
    /\ hWait \in {"none", "destroyed", "exited"} /\ hLate \in BOOLEAN
    /\ cpc \in {"launch", "hostjson", "manifest", "wait", "term", "done"}
    /\ opc \in {"read", "judge", "reread", "kill", "wait", "lastread", "failed", "marker", "repair", "done"}
    /\ oRound \in 0..Reconciles
    /\ gpc \in {"read", "judge", "final", "rm", "done"}
    /\ dpc \in {"idle", "check", "read", "rpc", "await", "final", "unreach", "killhost", "waithost",
                "fread", "kill", "wait", "freread", "marker", "write", "done", "died"}
    /\ dKind \in {"plain", "force", "blind"} /\ dResult \in {"none", "ok", "error"}

R1_NoLiveSessionDeleted == ~folder => ~HostMayWrite
R2_HostDeathOnlyWhenDead == (folder /\ mf.status = "failed" /\ mf.death) => ~hAlive
R3_TerminalIsFinal == (folder /\ everTerminal) => mf.status # "running"
R4_RecordedExitKept ==
    (folder /\ exitRecorded) => (mf.exit /\ mf.status \in {"exiting", "exited", "destroyed"})
R5_RunningSessionReachable == (hAlive /\ hpc = "loop" /\ hMf.status = "running" /\ folder) => sock
R6_HostStartsWhenCreated == ~hostFailedStart
R7_TerminalIsLastWrite == (folder /\ Terminal(mf.status)) => ~HostMayWrite
R8_DestroyedOnlyWhenEnded == (hAlive /\ folder /\ mf.status = "destroyed") => hExit
R9_DestroyEndsDestroyed == dResult = "ok" => dSaw
R10_RemovedFolderStaysRemoved == removedOnce => ~folder
\* R11, R16, R20: not for a record destroy --force wrote blind (dKind = "blind")
R11_DestroyedProgramStopped ==
    (folder /\ mf.status = "destroyed" /\ dKind # "blind") => (~Members \/ exitedOnOwn \/ ~everNamed)
R13_LiveGroupStaysNamed == (folder /\ everNamed /\ Members) => mf.child
R14_DestroyOutlivesProgram == ~destroyKilled
R15_NoUnrelatedGroupKilled == ~unrelatedKilled
R16_DestroyedSessionStopped == (folder /\ mf.status = "destroyed" /\ dKind # "blind") => ~Members
R17_FailedCreateStopped ==
    (cGaveUp /\ cpc = "done" /\ Serving /\ hShutdown = "none") => termSent
R18_DestroyedStaysDestroyed ==
    (dResult = "ok" /\ folder) => (mf.status = "destroyed" \/ opc \in {"marker", "repair"})
R19_NoUnrelatedHostKilled == ~unrelatedHostKilled
R20_RemovedSessionStopped == ~gcRemovedLive \/ dKind = "blind"

(* Witnesses: states the rules talk about must be reachable (each run expects a violation) *)
NoWitnessServes == ~(cpc = "done" /\ ~cGaveUp /\ hpc = "loop")
NoWitnessGcRemoves == ~removedOnce
NoWitnessResize == ~hResized
NoWitnessCleanExit == ~(mf.status = "exited" /\ ~dSaw)
NoWitnessCrashReconciled == ~(mf.status = "failed" /\ mf.death)
NoWitnessPlainDestroy == ~(dKind = "plain" /\ dResult = "ok" /\ hpc = "gone" /\ ~exitRecorded)
NoWitnessForceDestroy == ~(dKind = "force" /\ dResult = "ok" /\ hpc = "dead" /\ ~exitRecorded)
NoWitnessSigtermRecorded == ~(hShutdown = "sigterm" /\ mf.status = "destroyed")
NoWitnessCreateGaveUpDestroyed == ~(cGaveUp /\ mf.status = "destroyed")
NoWitnessForeignOutlivesDestroy == ~(foreign /\ dResult = "error" /\ mf.status = "destroying" /\ ~hAlive)
NoWitnessLeftoverStopped == ~(exitedOnOwn /\ dResult = "ok" /\ mf.status = "destroyed" /\ ~leftover)
NoWitnessWaitPassesReusedId == ~waitPassedReused
NoWitnessRepair == ~repaired
NoWitnessInsideRerun == ~(dInside /\ dRerun /\ dResult = "ok")
NoWitnessProgramOutlivesHost == ~(leader = "runs" /\ hpc = "dead" /\ mf.status = "running")
NoWitnessChainStopped == ~(Unseen /\ leftoverKilled /\ mf.status = "destroyed")
NoWitnessUnsharedDestroyCompletes == ~(OtherSpace /\ dResult = "ok")
NoWitnessUnsharedGcRemovesLeftover == ~(OtherSpace /\ removedOnce /\ leftover)
\* destroy, outside the leaf's cgroup namespace, kills what an exited program left (by the token)
NoWitnessUnseenLeafStopped ==
    ~(Cgroup /\ LeafUnseen /\ leftoverKilled /\ dCopy.status = "exited" /\ dResult = "ok" /\ mf.status = "destroyed")
\* The seed's witnesses (issue 24): the states its table names, each reachable
\* destroy --force killed the host and the group, and its group wait reads the group alive
\* while a process of another user runs: the wait ends with HOST_TIMEOUT, the record stays active
NoWitnessForeignOutlivesForce ==
    ~(foreign /\ dKind = "force" /\ dpc = "wait" /\ ~Terminal(dCopy.status) /\ Alive("cli")
      /\ ~hAlive /\ leader # "runs" /\ Active(mf.status))
\* destroy --force reaches its group kill while an unrelated group holds the program's group id
NoWitnessReusedIdAtForceKill == ~(dKind = "force" /\ dpc = "kill" /\ reused /\ HasRecord("cli"))
\* destroy --force stops a program that only program.json names (the host died before its
\* start-up write), with the other command not started
NoWitnessProgramJsonOnlyStopped ==
    ~(dKind = "force" /\ dResult = "ok" /\ mf.status = "destroyed" /\ ~everNamed /\ programJson
      /\ leader = "ended" /\ ~exitedOnOwn /\ opc = "read" /\ oRound = 0)
\* a program whose host died before program.json named it outlives a destroy that reports destroyed
NoWitnessUnnamedOutlivesDestroy ==
    ~(leader = "runs" /\ ~programJson /\ ~everNamed /\ dResult = "ok" /\ folder /\ mf.status = "destroyed")
\* a reconcile's read writes destroyed over a marked terminal manifest (ReconcileRepairsMarked)
NoWitnessMarkedRepair == ~(opc = "repair" /\ oCopy.status \in {"exited", "failed"} /\ markDestroyed)
\* destroy --force reaches its host kill while a process that took the ended host's pid runs
NoWitnessHostPidReusedAtKill == ~(dpc = "killhost" /\ hPidReused /\ hostJson /\ dCopy.host)
\* destroy --force reaches its host kill while a live host has not written host.json yet
NoWitnessUnrecordedHostMeetsKill == ~(dpc = "killhost" /\ hAlive /\ ~hostJson /\ dCopy.host)
\* ForceSkipsUnreadableGroup: destroy --force reports destroyed without the group check
NoWitnessUncheckedForceDestroys == ~(dKind = "blind" /\ dResult = "ok")
\* Refused: gc removes an ended session while a process the program left runs
NoWitnessRefusedGcRemovesLeftover == ~(Refused /\ removedOnce /\ leftover)
=============================================================================
