#!/usr/bin/perl
# count-usr1.pl READYFILE: counts the SIGUSR1s it receives in 2 s after it
# created READYFILE, then prints "got N".
my $n = 0;
$SIG{USR1} = sub { $n++ };
open(my $f, '>', $ARGV[0]) or die "$ARGV[0]: $!";
close $f;
my $end = time + 2;
select(undef, undef, undef, 0.05) while time < $end;
print "got $n\n";
