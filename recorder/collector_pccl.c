/* The PCCL collector (NCCL-compatible collectives through NCCL's profiler
 * plugin; the target side is inject/pccl.c): the launcher points
 * NCCL_PROFILER_PLUGIN at libasys-inject.so, keeping a plugin the user had
 * set there to be called alongside (ASYS_PCCL_CHAIN), and at finalize
 * writes the manifest's "pccl" object: what happened to the user's plugin,
 * communicators, events and drops. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "asys_format.h"
#include "collector.h"
#include "notes.h"

/* Whether two paths name one file (a nested asys points NCCL at us). */
static int same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
           sa.st_ino == sb.st_ino;
}

static int user_said_none(void)
{
    const char *user = getenv("NCCL_PROFILER_PLUGIN");
    return user && !strcasecmp(user, "none");
}

static int prepare(const struct asys_collector_setup *s, struct asys_env *env, struct asys_err *err)
{
    const char *user = getenv("NCCL_PROFILER_PLUGIN");
    if (user && !strcasecmp(user, "none")) {
        /* NCCL then loads no plugin at all: the user's choice stands */
        asys_note(ASYS_NOTE_NOTICE, "NCCL_PROFILER_PLUGIN=none is set: NCCL loads no profiler "
                                    "plugin, so -t pccl records nothing");
        return 0;
    }
    if (user && same_file(user, s->inject_library))
        user = NULL;
    /* "" asks the plugin to try NCCL's default name, libnccl-profiler.so */
    if (asys_env_set(env, "ASYS_PCCL_CHAIN", user ? user : "", err) != 0)
        return -1;
    return asys_env_set(env, "NCCL_PROFILER_PLUGIN", s->inject_library, err);
}

struct pccl_tally {
    uint64_t communicators, events, dropped, unfinished;
    int versions; /* bit N: interface vN was called */
    unsigned chain_status;
    uint32_t chain_version;
    char chain_text[ASYS_PCCL_STATUS_TEXT_MAX + 1];
};

static void *tally_begin(void)
{
    return calloc(1, sizeof(struct pccl_tally));
}

static void tally_record(void *state, const struct asys_segment_header *h,
                         const struct asys_record *rec)
{
    (void)h;
    struct pccl_tally *t = state;
    if (!t)
        return;
    if (rec->type == ASYS_REC_PCCL_COMM && rec->size >= sizeof(struct asys_rec_pccl_comm)) {
        const struct asys_rec_pccl_comm *c = (const void *)rec->data;
        if (c->event_mask) /* a second COMM record (v3: the hash learned late) has none */
            t->communicators++;
        if (rec->arg < 16)
            t->versions |= 1 << rec->arg;
    } else if (rec->type == ASYS_REC_PCCL_COMM_END &&
               rec->size >= sizeof(struct asys_rec_pccl_comm_end)) {
        const struct asys_rec_pccl_comm_end *e = (const void *)rec->data;
        t->events += e->events;
        t->dropped +=
            e->dropped_no_slot + e->dropped_reentry + e->dropped_bad_handle + e->dropped_unknown;
        t->unfinished += e->unfinished;
    } else if (rec->type == ASYS_REC_PCCL_STATUS &&
               rec->size >= sizeof(struct asys_rec_pccl_status)) {
        const struct asys_rec_pccl_status *s = (const void *)rec->data;
        size_t length = s->text_length;
        if (length > rec->size - sizeof *s)
            length = rec->size - sizeof *s;
        if (length > ASYS_PCCL_STATUS_TEXT_MAX)
            length = ASYS_PCCL_STATUS_TEXT_MAX;
        t->chain_status = rec->arg;
        t->chain_version = s->version;
        memcpy(t->chain_text, s + 1, length);
        t->chain_text[length] = '\0';
    }
}

static int tally_end(void *state, cJSON **object, struct asys_err *err)
{
    struct pccl_tally *t = state;
    cJSON *o = NULL;
    int rc = 0;
    if (!t) /* its memory could not be had at finalize_begin */
        return asys_fail_kind(err, ASYS_ERR_NOMEM, "out of memory");
    if (!t->communicators && !t->chain_status && !user_said_none())
        goto out; /* the program used no NCCL */
    o = cJSON_CreateObject();
    if (!o) {
        rc = asys_fail_kind(err, ASYS_ERR_NOMEM, "out of memory");
        goto out;
    }
    if (user_said_none()) {
        cJSON_AddStringToObject(o, "plugin", "none: NCCL_PROFILER_PLUGIN=none was left as set");
        goto out;
    }
    char versions[32] = "";
    for (int v = 2; v <= 5; v++)
        if (t->versions & (1 << v))
            snprintf(versions + strlen(versions), sizeof versions - strlen(versions), "%sv%d",
                     versions[0] ? "," : "", v);
    cJSON_AddStringToObject(o, "plugin", versions[0] ? versions : "not loaded");
    cJSON_AddNumberToObject(o, "communicators", (double)t->communicators);
    cJSON_AddNumberToObject(o, "events", (double)t->events);
    cJSON_AddNumberToObject(o, "dropped", (double)t->dropped);
    cJSON_AddNumberToObject(o, "unfinished", (double)t->unfinished);
    if (t->chain_status == ASYS_PCCL_CHAINED) {
        cJSON_AddStringToObject(o, "user_plugin", "chained");
        cJSON_AddStringToObject(o, "user_plugin_name", t->chain_text);
        cJSON_AddNumberToObject(o, "user_plugin_version", t->chain_version);
    } else if (t->chain_status == ASYS_PCCL_CHAIN_FAILED) {
        cJSON_AddStringToObject(o, "user_plugin", "failed");
        cJSON_AddStringToObject(o, "user_plugin_name", t->chain_text);
    }
out:
    free(t);
    *object = o;
    return rc;
}

const struct asys_collector asys_collector_pccl = {
    .name = "pccl",
    .alias = "nccl",
    .feature = ASYS_FEATURE_PCCL,
    .built = 1,
    .traced = 1,
    .summary = "NCCL-compatible collectives, point-to-point and proxy work (NCCL's profiler "
               "plugin)",
    .prepare = prepare,
    .finalize_begin = tally_begin,
    .finalize_record = tally_record,
    .finalize_end = tally_end,
};
