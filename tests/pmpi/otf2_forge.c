/* Writes small OTF2 archives that are well-formed OTF2 but wrong for a
 * replay (tests/python/test_trace_refusals.py), serially, two ranks:
 *   otf2_forge DIR unknown-comm   rank 0 sends on a communicator that is
 *                                 not defined
 *   otf2_forge DIR outside-comm   rank 0 sends to rank 5 of the 2-rank world
 *   otf2_forge DIR huge-message   rank 0 sends 2 GiB (beyond the 1 GiB limit)
 *   otf2_forge DIR many-ranks     65537 locations defined (beyond the limit)
 *   otf2_forge DIR no-send        rank 1 receives 64 B that rank 0 never
 *                                 sends (a replay deadlocks)
 *   otf2_forge DIR ok             rank 0 sends 64 B to rank 1 (a control)
 * Exit status 0, or 1 with a message. */
#include <otf2/otf2.h>
#include <stdio.h>
#include <string.h>

static OTF2_FlushType pre_flush(void *ud, OTF2_FileType ft, OTF2_LocationRef loc, void *cd,
                                bool final) {
  (void)ud, (void)ft, (void)loc, (void)cd, (void) final;
  return OTF2_FLUSH;
}
static OTF2_TimeStamp post_flush(void *ud, OTF2_FileType ft, OTF2_LocationRef loc) {
  (void)ud, (void)ft, (void)loc;
  return 0;
}
static OTF2_FlushCallbacks flush_cbs = {pre_flush, post_flush};

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr,
            "usage: otf2_forge DIR unknown-comm|outside-comm|huge-message|many-ranks|no-send|ok\n");
    return 1;
  }
  const char *kind = argv[2];
  OTF2_CommRef comm = 0;
  uint32_t peer = 1;
  uint64_t bytes = 64;
  int nloc = 2, send = 1;
  if (!strcmp(kind, "unknown-comm"))
    comm = 7;
  else if (!strcmp(kind, "outside-comm"))
    peer = 5;
  else if (!strcmp(kind, "huge-message"))
    bytes = 2ULL << 30;
  else if (!strcmp(kind, "many-ranks"))
    nloc = 65537;
  else if (!strcmp(kind, "no-send"))
    send = 0;
  else if (strcmp(kind, "ok")) {
    fprintf(stderr, "otf2_forge: unknown kind %s\n", kind);
    return 1;
  }
  OTF2_Archive *ar = OTF2_Archive_Open(argv[1], "traces", OTF2_FILEMODE_WRITE, 1 << 20, 1 << 22,
                                       OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
  if (!ar) {
    fprintf(stderr, "otf2_forge: cannot create %s\n", argv[1]);
    return 1;
  }
  OTF2_Archive_SetFlushCallbacks(ar, &flush_cbs, NULL);
  OTF2_Archive_SetSerialCollectiveCallbacks(ar);
  OTF2_Archive_OpenEvtFiles(ar);
  for (int r = 0; r < 2; r++) {
    OTF2_EvtWriter *ev = OTF2_Archive_GetEvtWriter(ar, (OTF2_LocationRef)r);
    OTF2_EvtWriter_Enter(ev, NULL, 10, 0);
    if (r == 0 && send)
      OTF2_EvtWriter_MpiSend(ev, NULL, 11, peer, comm, 0, bytes);
    else if (r == 1)
      OTF2_EvtWriter_MpiRecv(ev, NULL, 11, 0, 0, 0, 64);
    OTF2_EvtWriter_Leave(ev, NULL, 12, 0);
    OTF2_Archive_CloseEvtWriter(ar, ev);
  }
  OTF2_Archive_CloseEvtFiles(ar);
  OTF2_Archive_OpenDefFiles(ar);
  for (int r = 0; r < 2; r++)
    OTF2_Archive_CloseDefWriter(ar, OTF2_Archive_GetDefWriter(ar, (OTF2_LocationRef)r));
  OTF2_Archive_CloseDefFiles(ar);
  OTF2_GlobalDefWriter *w = OTF2_Archive_GetGlobalDefWriter(ar);
  OTF2_GlobalDefWriter_WriteClockProperties(w, 1000000000ULL, 0, 100, OTF2_UNDEFINED_UINT64);
  OTF2_GlobalDefWriter_WriteString(w, 0, "");
  OTF2_GlobalDefWriter_WriteString(w, 1, "MPI_Send");
  OTF2_GlobalDefWriter_WriteString(w, 2, "rank");
  OTF2_GlobalDefWriter_WriteRegion(w, 0, 1, 1, 0, OTF2_REGION_ROLE_POINT2POINT, OTF2_PARADIGM_MPI,
                                   OTF2_REGION_FLAG_NONE, 0, 0, 0);
  OTF2_GlobalDefWriter_WriteSystemTreeNode(w, 0, 2, 2, OTF2_UNDEFINED_SYSTEM_TREE_NODE);
  const uint64_t members[2] = {0, 1};
  for (int r = 0; r < nloc; r++) { /* events only for the first two */
    OTF2_GlobalDefWriter_WriteLocationGroup(w, (OTF2_LocationGroupRef)r, 2,
                                            OTF2_LOCATION_GROUP_TYPE_PROCESS, 0,
                                            OTF2_UNDEFINED_LOCATION_GROUP);
    OTF2_GlobalDefWriter_WriteLocation(w, (OTF2_LocationRef)r, 2, OTF2_LOCATION_TYPE_CPU_THREAD, 3,
                                       (OTF2_LocationGroupRef)r);
  }
  OTF2_GlobalDefWriter_WriteGroup(w, 0, 0, OTF2_GROUP_TYPE_COMM_LOCATIONS, OTF2_PARADIGM_MPI,
                                  OTF2_GROUP_FLAG_NONE, 2, members);
  OTF2_GlobalDefWriter_WriteGroup(w, 1, 0, OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI,
                                  OTF2_GROUP_FLAG_NONE, 2, members);
  OTF2_GlobalDefWriter_WriteComm(w, 0, 0, 1, OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE);
  OTF2_Archive_Close(ar);
  return 0;
}
