#!/usr/bin/perl
# jobctl.pl DELAY_MS SIGNAL CMD...: what a job-control shell does with ^Z and
# fg. Starts CMD in its own process group, sends SIGNAL to the whole group
# after DELAY_MS, or once the file FILE exists when DELAY_MS is @FILE
# (SIGNAL ZERO: no signal), and whenever its child stops, continues the group (fg).
# Prints "exit N stops S" or "signal N stops S" once CMD ended, or "hung"
# (and kills the group) when nothing ended within 10 s.
use strict;
use warnings;
use POSIX qw(:sys_wait_h);
use Time::HiRes qw(usleep time);

my ($delay, $sig, @cmd) = @ARGV;
my $p = fork // die "fork: $!";
if (!$p) {
	setpgrp(0, 0);
	$SIG{$_} = 'DEFAULT' for qw(INT QUIT TSTP TTIN TTOU CONT);
	exec { $cmd[0] } @cmd or die "exec $cmd[0]: $!\n";
}
setpgrp($p, $p);
if ($delay =~ /^@(.*)/) {
	my $end = time + 30;
	usleep(10000) until -e $1 || time > $end;
} else {
	usleep($delay * 1000);
}
kill $sig, -$p;
my ($stops, $t0) = (0, time);
for (;;) {
	my $r = waitpid($p, WUNTRACED | WNOHANG);
	if ($r == $p) {
		my $st = ${^CHILD_ERROR_NATIVE};	# $? does not keep a stop
		if (WIFSTOPPED($st)) {
			$stops++;
			kill 'CONT', -$p;
			next;
		}
		if (WIFEXITED($st)) { printf "exit %d stops %d\n", WEXITSTATUS($st), $stops }
		else { printf "signal %d stops %d\n", WTERMSIG($st), $stops }
		exit 0;
	}
	if (time - $t0 > 10) {
		print "hung stops $stops\n";
		kill 'KILL', -$p;
		waitpid($p, 0);
		exit 1;
	}
	usleep(5000);
}
