/*
 * in_child.h: runs a part of a C test program in a child process, so that
 * what the part does to its process (address-space limits, running out of
 * memory, an alarm) ends with it (handles.c, oom.c), and measures that
 * process's address space. Needs <signal.h>, <stdio.h>, <string.h>,
 * <sys/wait.h> and <unistd.h>, with _POSIX_C_SOURCE 200809L (strsignal).
 */
#ifndef JCODE_MOBILE_IN_CHILD_H
#define JCODE_MOBILE_IN_CHILD_H

/* Runs `body` in a child; 0 when it exited 0 (not killed by a signal). */
static int in_child(const char *name, int (*body)(void)) {
    int status = 0;
    pid_t pid;
    fflush(stdout);
    pid = fork();
    if (pid < 0) {
        perror("fork");
        return 2;
    }
    if (pid == 0) _exit(body());
    if (waitpid(pid, &status, 0) != pid) {
        perror("waitpid");
        return 2;
    }
    if (WIFSIGNALED(status)) {
        printf("FAIL %s: the child died by signal %d (%s)%s\n", name, WTERMSIG(status), strsignal(WTERMSIG(status)),
               WTERMSIG(status) == SIGALRM ? ": over 60 s" : "");
        return 1;
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        printf("FAIL %s: child exit status %d\n", name, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
        return 1;
    }
    return 0;
}

/* The process's address space in bytes (/proc/self/statm: size in pages). */
static unsigned long address_space(void) {
    unsigned long pages = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f) return 0;
    if (fscanf(f, "%lu", &pages) != 1) pages = 0;
    fclose(f);
    return pages * (unsigned long)sysconf(_SC_PAGESIZE);
}

#endif
