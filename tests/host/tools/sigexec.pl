#!/usr/bin/perl
# sigexec.pl [--subreaper] [--foreground] [--ignore SIG,...] [--block SIG,...|all]
#            -- CMD...:
# exec CMD with the signal state a caller may hand down: made a child
# subreaper (prctl PR_SET_CHILD_SUBREAPER), the signals named ignored, the
# ones named (or all) blocked. --foreground: first a process group of its
# own, given the terminal on standard input (as a container's init that
# owns its terminal).
use strict; use warnings; use POSIX ();
my ($sub, $fg, @ign, @blk);
while (@ARGV && $ARGV[0] ne '--') {
	my $o = shift;
	if ($o eq '--subreaper') { $sub = 1 }
	elsif ($o eq '--foreground') { $fg = 1 }
	elsif ($o eq '--ignore') { push @ign, split /,/, shift }
	elsif ($o eq '--block') { push @blk, split /,/, shift }
	else { die "sigexec.pl: unknown option $o\n" }
}
shift;
if ($sub) { require 'syscall.ph'; syscall(&SYS_prctl, 36, 1, 0, 0, 0) == 0 or die "prctl: $!\n" }
if ($fg) {
	setpgrp(0, 0) or die "setpgrp: $!\n";
	local $SIG{TTOU} = 'IGNORE';
	POSIX::tcsetpgrp(0, $$) or die "tcsetpgrp: $!\n";
}
$SIG{$_} = 'IGNORE' for @ign;
my $set = POSIX::SigSet->new;
if (grep { $_ eq 'all' } @blk) { $set->fillset } else { $set->addset(eval "POSIX::SIG$_()") for @blk }
POSIX::sigprocmask(POSIX::SIG_BLOCK(), $set) or die "sigprocmask: $!\n";
exec { $ARGV[0] } @ARGV or die "exec $ARGV[0]: $!\n";
