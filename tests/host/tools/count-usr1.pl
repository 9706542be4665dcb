#!/usr/bin/perl
# count-usr1.pl READYFILE [SIG]: counts the SIGUSR1s (or SIGs: a real-time
# one queues every copy) it receives in 2 s after it created READYFILE, then
# prints "got N".
my $n = 0;
$SIG{$ARGV[1] // 'USR1'} = sub { $n++ };
open(my $f, '>', $ARGV[0]) or die "$ARGV[0]: $!";
close $f;
my $end = time + 2;
select(undef, undef, undef, 0.05) while time < $end;
print "got $n\n";
